# GEMM GFLOPS versus problem size, one curve per profile, dtype, engine
# and thread count (filled markers: all threads, open: one), the median's
# confidence interval as error bars, and each dtype's measured compute
# peak as a dashed line in its colour.
# Variables: datafile, title, nseries, label[], series_lt[], series_pt[],
# npeaks, peak_gflops[], peak_lt[], peak_label[].  Data columns:
# cbrt(m*n*k) m n k gflops ci_low ci_high.
set title title
set logscale x 2
set xlabel 'GEMM size, cube root of m*n*k (elements)' offset 0,0.6
set ylabel 'GFLOPS (GOPS for int8)'
set yrange [0:*]
set grid
set key outside bottom center horizontal maxcols 3 font ',10'
plot for [i=1:nseries] datafile index (i-1) using 1:5:6:7 \
       with yerrorlines lt series_lt[i] pt series_pt[i] title label[i], \
     for [j=1:npeaks] peak_gflops[j] with lines lt peak_lt[j] dt 2 lw 1.5 \
       title peak_label[j]
