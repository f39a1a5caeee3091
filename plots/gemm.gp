# GEMM GFLOPS versus problem size, one curve per profile, dtype, engine
# and thread count: colour per dtype, marker per engine and machine
# (filled: all threads, open: one), a dash per machine; the median's
# confidence interval as error bars; each dtype's measured compute peak
# as a thin line in its colour, in the machine's mark dash.
# Variables: datafile, title, nseries, label[], series_lt[], series_pt[],
# series_dt[], npeaks, peak_gflops[], peak_lt[], peak_dt[], peak_label[].
# Data columns: cbrt(m*n*k) m n k gflops ci_low ci_high.
set title title
set logscale x 2
set xlabel 'GEMM size, cube root of m*n*k (elements)'
set ylabel 'GFLOPS (GOPS for int8)'
set yrange [0:*]
set grid
set key outside right top vertical Left reverse font ',10' spacing 1.1
plot for [i=1:nseries] datafile index (i-1) using 1:5:6:7 \
       with yerrorlines lt series_lt[i] pt series_pt[i] dt series_dt[i] \
       title label[i], \
     for [j=1:npeaks] peak_gflops[j] with lines lt peak_lt[j] dt peak_dt[j] \
       lw 1.5 title peak_label[j]
