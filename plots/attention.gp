# Attention per shape in two panels: GFLOPS with the median's interval,
# and the fraction of the best GEMM at the same threads; one series per
# thread count (filled: all threads, open: one), shapes named on the x
# axis.  Variables: datafile, title, nseries, label[], series_lt[],
# series_pt[].  Data columns: position gflops ci_low ci_high pct_of_gemm
# "shape".
set multiplot layout 2,1 title title
set grid
set key outside right top vertical font ',10'
set rmargin 20
set xtics rotate by -12 font ',8' nomirror
set xrange [0.5:*]
set offsets 0, 0.5, 0, 0
set bmargin 6
set ylabel 'GFLOPS'
set yrange [0:*]
# the shape names once, at each shape's position, from every series
plot for [i=1:nseries] datafile index (i-1) using 1:2:3:4 \
       with yerrorbars lt series_lt[i] pt series_pt[i] ps 1.6 title label[i], \
     for [i=1:nseries] datafile index (i-1) \
       using (floor($1 + 0.5)):(NaN):xtic(6) notitle
set ylabel 'fraction of best GEMM (%)'
plot for [i=1:nseries] datafile index (i-1) using 1:5 \
       with points lt series_lt[i] pt series_pt[i] ps 1.6 title label[i], \
     for [i=1:nseries] datafile index (i-1) \
       using (floor($1 + 0.5)):(NaN):xtic(6) notitle
unset multiplot
