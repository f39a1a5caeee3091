# Roofline: memory ceilings (bandwidth x intensity up to the profile's
# highest compute ceiling), compute ceilings, and measured kernels.
# Variables: datafile, title, nseries, label[], ncompute, compute_gflops[],
# compute_label[], nmemory, memory_gbps[], memory_peak[], memory_label[],
# xmin, xmax.  Data columns: intensity_flop_per_byte gflops "name".
set title title
set logscale xy
set xrange [xmin:xmax]
set xlabel 'arithmetic intensity (FLOP/byte)'
set ylabel 'GFLOPS'
set grid
set samples 400
set key outside bottom center horizontal maxrows 4
roof(x, bw, peak) = (x * bw < peak ? x * bw : peak)
plot for [j=1:nmemory] roof(x, memory_gbps[j], memory_peak[j]) \
       with lines lw 2 title memory_label[j], \
     for [j=1:ncompute] compute_gflops[j] with lines dt 2 lw 1 \
       title compute_label[j], \
     for [i=1:nseries] datafile index (i-1) using 1:2 \
       with points pt 7 ps 1.5 title label[i], \
     for [i=1:nseries] datafile index (i-1) using 1:2:3 \
       with labels left offset 1,0.5 notitle
