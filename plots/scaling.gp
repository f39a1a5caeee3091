# GFLOPS versus threads (with the median's interval) against ideal linear
# scaling from the fewest-thread point (dashed, open markers), and the
# parallel efficiency (measured / ideal) in the lower panel; colour per
# dtype, marker and dash per machine.
# Variables: datafile, title, nseries, label[], series_lt[], series_pt[],
# series_dt[], plot_right, title_frac.  Data columns: threads gflops
# ideal_gflops efficiency ci_low ci_high.
set multiplot title title
# both panels end where the keys begin, under the title
set lmargin at screen 0.07
set rmargin at screen plot_right
set tmargin at screen 1 - title_frac
set bmargin at screen 0.56
set xlabel 'threads'
set ylabel 'GFLOPS'
set autoscale xfix
set yrange [0:*]
set xtics 1
set grid
set key outside right top vertical Left reverse font ',10' spacing 1.1
set offsets 0.5, 0.5, 0, 0
# the open form of a filled marker
open(pt) = pt % 2 == 1 && pt > 4 ? pt - 1 : pt
plot for [i=1:nseries] datafile index (i-1) using 1:2:5:6 \
       with yerrorlines lt series_lt[i] pt series_pt[i] dt series_dt[i] \
       title label[i], \
     for [i=1:nseries] datafile index (i-1) using 1:3 \
       with linespoints lt series_lt[i] pt open(series_pt[i]) ps 0.8 \
       dt 2 lw 1.2 title label[i].' ideal'
set ylabel 'parallel efficiency (%)'
set yrange [0:110]
set tmargin at screen 0.47
set bmargin at screen 0.07
plot for [i=1:nseries] datafile index (i-1) using 1:(100 * $4) \
       with linespoints lt series_lt[i] pt series_pt[i] dt series_dt[i] \
       title label[i], \
     100 with lines lc rgb '#777777' dt 2 title 'ideal (100%)'
unset multiplot
