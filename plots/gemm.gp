# GEMM GFLOPS versus problem size, one curve per profile, dtype and engine.
# Variables: datafile, title, nseries, label[].  Data columns:
# cbrt(m*n*k) m n k gflops.
set title title
set logscale x 2
set xlabel 'GEMM size, cube root of m*n*k'
set ylabel 'GFLOPS (GOPS for int8)'
set yrange [0:*]
set grid
set key outside bottom center horizontal maxrows 4
plot for [i=1:nseries] datafile index (i-1) using 1:5 \
       with linespoints lw 2 pt 7 lc i title label[i]
