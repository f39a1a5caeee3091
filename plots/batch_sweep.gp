# Throughput versus batch size, one curve per profile and mode, with the
# median's confidence interval as error bars, peak (filled) and knee (open)
# marked; both axes logarithmic.  Variables from the generated header: datafile, title, nseries,
# label[1..nseries].  Data columns: batch_size examples_per_s ci_low
# ci_high is_peak is_knee.
set title title
set logscale x 2
set xlabel 'batch size'
set ylabel 'throughput (examples/s)'
# log y: prefill and decode curves differ by orders of magnitude
set logscale y
set grid
set key outside bottom center horizontal maxrows 4
plot for [i=1:nseries] datafile index (i-1) using 1:2:3:4 \
       with yerrorlines lw 2 pt 7 ps 0.8 lc i title label[i], \
     for [i=1:nseries] datafile index (i-1) using 1:($5 > 0 ? $2 : NaN) \
       with points pt 7 ps 2.5 lc rgb 'red' title (i == 1 ? 'peak' : ''), \
     for [i=1:nseries] datafile index (i-1) using 1:($6 > 0 ? $2 : NaN) \
       with points pt 6 ps 3 lw 2 lc rgb 'black' title (i == 1 ? 'knee' : '')
