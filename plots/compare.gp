# Ratio new / base per point (a forest plot): one row per point, its
# confidence interval as a horizontal bar, the threshold band around 1
# shaded, regressions in red.  Variables: datafile, title, nseries,
# label[], series_lt[], series_pt[], threshold, npoints.  Data columns:
# row ratio ci_low ci_high "id".
set title title
set xlabel 'ratio new / base (1 = unchanged; direction as the metric: higher is better unless a time)'
set ylabel 'point'
set logscale x 2
set yrange [npoints + 0.5:0.5]
set ytics font ',9'
set grid xtics
set key outside bottom center horizontal
set object 1 rectangle from 1 - threshold, graph 0 to 1 + threshold, graph 1 \
  behind fillcolor rgb '#e8e8e8' fillstyle solid 1.0 noborder
set arrow 1 from 1, graph 0 to 1, graph 1 nohead lc rgb '#444444' dt 1
set bmargin 6
set lmargin 48
plot for [i=1:nseries] datafile index (i-1) using 2:1:3:4:ytic(5) \
       with xerrorbars lt series_lt[i] dt 1 pt series_pt[i] ps 1.1 lw 1.5 \
       title label[i], \
     NaN with boxes fillcolor rgb '#e8e8e8' fillstyle solid 1.0 noborder \
       title sprintf('threshold band +-%g%%', 100 * threshold)
