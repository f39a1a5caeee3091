# Compute peak per dtype and engine (vector FMA, dot products, matrix
# engines): the measured rate as a share of the theoretical peak, one bar
# per machine (its colour) and thread count (hatched: one thread) side by
# side in the kernel's place, the measured / theoretical figures written
# up each bar.  Error bars: the median's confidence interval on the same
# scale.
# Variables: datafile, title, nseries, label[], series_lt[], series_pt[]
# (1 solid, 2 hatched).  Data columns: position pct_of_theoretical
# measured theoretical ci_low_pct ci_high_pct width "kernel".
set title title
set ylabel 'measured / theoretical peak (%)'
set yrange [0:140]
set xrange [0.5:*]
set autoscale xfixmax
set offsets 0, 0.5, 0, 0
set grid ytics
set key outside right top vertical Left reverse font ',10' spacing 1.1
set xtics font ',9' nomirror rotate by 90 right
set label 1 'kernels by dtype, instruction and vector width; up each bar: ' . \
  'measured/theoretical (GFLOPS; GOPS for int8)' \
  at graph 0.01, graph 0.97 font ',9'
solid(i, v) = series_pt[i] == 2 ? NaN : v
hatched(i, v) = series_pt[i] == 2 ? v : NaN
figure(v) = abs(v) < 1e7 ? sprintf('%.0f', v) : sprintf('%.3g', v)
plot for [i=1:nseries] datafile index (i-1) using 1:(solid(i, $2)):7 \
       with boxes lt series_lt[i] dt 1 fs solid 0.85 border rgb '#333333' \
       title (series_pt[i] == 2 ? '' : label[i]), \
     for [i=1:nseries] datafile index (i-1) using 1:(hatched(i, $2)):7 \
       with boxes lt series_lt[i] dt 1 fs pattern 4 border rgb '#333333' \
       title (series_pt[i] == 2 ? label[i] : ''), \
     for [i=1:nseries] datafile index (i-1) using 1:5:(0):($6 - $5) \
       with vectors heads size screen 0.004,90 lc rgb '#222222' dt 1 \
       lw 1.5 notitle, \
     for [i=1:nseries] datafile index (i-1) \
       using (floor($1 + 0.5)):(NaN):xtic(8) notitle, \
     for [i=1:nseries] datafile index (i-1) \
       using 1:6:(figure($3).'/'.figure($4)) with labels \
       rotate by 90 left offset 0,0.8 font ',8' notitle, \
     100 with lines lc rgb '#444444' dt 2 title 'theoretical peak'
