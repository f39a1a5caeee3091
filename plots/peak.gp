# Compute peak per dtype and engine (vector FMA, dot products, matrix
# engines): the measured rate as a share of the theoretical peak, one bar
# per thread count, the measured / theoretical figures written on it.
# Error bars: the median's confidence interval on the same scale.
# Variables: datafile, title, nseries, label[], series_lt[].  Data
# columns: position pct_of_theoretical measured theoretical ci_low_pct
# ci_high_pct "kernel".
set title title
set ylabel 'measured / theoretical peak (%)'
set xlabel 'kernel (dtype, instruction, vector width)' offset 0,0.3
set yrange [0:135]
set xrange [0.4:*]
set offsets 0, 0.6, 0, 0
set grid ytics
set boxwidth 0.38
set style fill solid 0.85 border rgb '#333333'
set key outside bottom center horizontal font ',10'
set xtics font ',9' nomirror rotate by -25
set bmargin 9
set label 1 'labels: measured/theoretical (GFLOPS; GOPS for int8)' \
  at graph 0.01, graph 0.96 font ',9'
plot for [i=1:nseries] datafile index (i-1) using 1:2 \
       with boxes lt series_lt[i] dt 1 title label[i], \
     for [i=1:nseries] datafile index (i-1) using 1:2:5:6 \
       with yerrorbars lc rgb '#222222' dt 1 lw 1.5 pt -1 notitle, \
     for [i=1:nseries] datafile index (i-1) \
       using (floor($1 + 0.5)):(NaN):xtic(7) notitle, \
     for [i=1:nseries] datafile index (i-1) \
       using 1:6:(sprintf('%.0f/%.0f', $3, $4)) with labels \
       rotate by 90 left offset 0,0.5 font ',8' notitle, \
     100 with lines lc rgb '#444444' dt 2 title 'theoretical peak'
