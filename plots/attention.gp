# Attention per shape in two panels sharing the x axis: GFLOPS with the
# median's interval, and the fraction of the best GEMM at the same
# threads; one series per machine, dtype and thread count (colour per
# dtype, marker per machine, filled: all threads, open: one), the
# series of a shape side by side in its place; the shapes named under
# the lower panel.
# Variables: datafile, title, nseries, label[], series_lt[], series_pt[],
# series_dt[], series_tag[] (1: the series has fractions of GEMM),
# plot_right, title_frac.  Data
# columns: position gflops ci_low ci_high pct_of_gemm "shape".
have_pct = 0
do for [i=1:nseries] {
  if (series_tag[i]) { have_pct = 1 }
}
set multiplot title title
set grid
set key outside right top vertical Left reverse font ',10' spacing 1.1
# the shapes' places 1, 2, ...: one x range for both panels
stats datafile using 1 nooutput
set xrange [0.5:floor(STATS_max + 0.5) + 0.5]
# both panels end where the key begins, under the title
set lmargin at screen 0.07
set rmargin at screen plot_right
# upper panel: GFLOPS, the shapes' places without names
set tmargin at screen 1 - title_frac
set bmargin at screen 0.58
set format x ''
set xtics 1
set ylabel 'GFLOPS'
set yrange [0:*]
plot for [i=1:nseries] datafile index (i-1) using 1:2:3:4 \
       with yerrorbars lt series_lt[i] pt series_pt[i] ps 1.6 title label[i]
# lower panel: the fraction of GEMM, the shapes named below it
set tmargin at screen 0.56
set bmargin at screen 0.32
set format x '%g'
set xtics rotate by 90 right font ',8' nomirror
set ylabel 'fraction of best GEMM (%)'
unset key
if (have_pct) {
  plot for [i=1:nseries] datafile index (i-1) using 1:5 \
         with points lt series_lt[i] pt series_pt[i] ps 1.6 notitle, \
       for [i=1:nseries] datafile index (i-1) \
         using (floor($1 + 0.5)):(NaN):xtic(6) notitle
} else {
  set yrange [0:100]
  set label 99 'not measured' at graph 0.5, graph 0.5 center
  plot for [i=1:nseries] datafile index (i-1) \
         using (floor($1 + 0.5)):(50):xtic(6) with points \
         lc rgb '#FFFFFFFF' notitle
  unset label 99
}
unset multiplot
