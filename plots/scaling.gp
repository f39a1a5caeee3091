# GFLOPS versus threads (with the median's interval) against ideal linear
# scaling from the fewest-thread point, and the parallel efficiency
# (measured / ideal) on the right axis.
# Variables: datafile, title, nseries, label[], series_lt[].  Data columns:
# threads gflops ideal_gflops efficiency ci_low ci_high.
set multiplot layout 1,2 title title
set xlabel 'threads' offset 0,0.6
set ylabel 'GFLOPS'
set autoscale xfix
set yrange [0:*]
set xtics 1
set grid
set key outside bottom center horizontal maxcols 2 font ',10'
set offsets 0.5, 0.5, 0, 0
set bmargin 6
plot for [i=1:nseries] datafile index (i-1) using 1:2:5:6 \
       with yerrorlines lt series_lt[i] dt 1 title label[i], \
     for [i=1:nseries] datafile index (i-1) using 1:3 \
       with lines lt series_lt[i] dt 2 lw 1.5 title label[i].' ideal'
set ylabel 'parallel efficiency (%)'
set yrange [0:110]
plot for [i=1:nseries] datafile index (i-1) using 1:(100 * $4) \
       with linespoints lt series_lt[i] title label[i], \
     100 with lines lc rgb '#777777' dt 2 title 'ideal (100%)'
unset multiplot
