# Compute peak per dtype and engine (vector FMA, dot products, matrix
# engines): the measured rate as a share of the theoretical peak, one bar
# per thread count, the measured / theoretical figures written on it.
# Variables: datafile, title, nseries, label[], series_lt[].  Data
# columns: position pct_of_theoretical measured theoretical "kernel".
set title title
set ylabel 'measured / theoretical peak (%)'
set xlabel 'kernel (dtype, instruction, vector width)' offset 0,0.3
set yrange [0:120]
set xrange [0.4:*]
set offsets 0, 0.6, 0, 0
set grid ytics
set boxwidth 0.38
set label 1 'bars: measured/theoretical' at graph 0.01, graph 0.97 font ',9'
set style fill solid 0.85 border rgb '#333333'
set key outside bottom center horizontal font ',10'
set xtics font ',9' nomirror
set bmargin 7
plot for [i=1:nseries] datafile index (i-1) using 1:2 \
       with boxes lt series_lt[i] dt 1 title label[i].' (GFLOPS or GOPS for int8)', \
     for [i=1:nseries] datafile index (i-1) \
       using (floor($1 + 0.5)):(NaN):xtic(5) notitle, \
     for [i=1:nseries] datafile index (i-1) \
       using 1:2:(sprintf('%.0f/%.0f', $3, $4)) with labels \
       offset 0,0.7 font ',8' notitle, \
     100 with lines lc rgb '#444444' dt 2 title 'theoretical peak'
