# GFLOPS versus threads against ideal linear scaling from the fewest-thread
# point.  Variables: datafile, title, nseries, label[].  Data columns:
# threads gflops ideal_gflops efficiency.
set title title
set xlabel 'threads'
set ylabel 'GFLOPS'
set xrange [0:*]
set yrange [0:*]
set xtics 1
set grid
set key outside bottom center horizontal maxrows 4
plot for [i=1:nseries] datafile index (i-1) using 1:2 \
       with linespoints lw 2 pt 7 lc i title label[i], \
     for [i=1:nseries] datafile index (i-1) using 1:3 \
       with lines dt 2 lw 1 lc i title label[i].' ideal'
