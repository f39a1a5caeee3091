# Roofline: for each dtype its roof (main-memory bandwidth x intensity up
# to the dtype's measured peak) in that dtype's colour, each cache level's
# slope as a thin grey line, the ridge points (where a roof bends) as
# open diamonds, and the measured kernels: colour = dtype, marker = kernel
# family, filled = all threads, open = one thread.  No text at the points
# (it would collide): the key names every series.
# Variables: datafile, title, nseries, label[], series_lt[], series_pt[],
# ncompute, compute_gflops[], compute_lt[], compute_dram[], compute_label[],
# nmemory, memory_gbps[], memory_peak[], memory_label[], xmin, xmax.
# Data columns: intensity_flop_per_byte gflops "name".
set title title
set logscale xy
set xrange [xmin:xmax]
set xlabel 'arithmetic intensity (FLOP/byte)'
set ylabel 'GFLOPS'
set grid
set samples 400
set key outside bottom center horizontal maxcols 2 font ',10'
set xlabel offset 0,0.4
roof(x, bw, peak) = (x * bw < peak ? x * bw : peak)
array grey[4] = ['#999999', '#777777', '#555555', '#333333']
do for [j=1:ncompute] {
  set label '' at compute_gflops[j] / compute_dram[j], compute_gflops[j] \
    point lt compute_lt[j] pt 12 ps 2
}
plot for [k=1:nmemory] roof(x, memory_gbps[k], memory_peak[k]) \
       with lines lw 1.2 dt 2 lc rgb grey[(k - 1) % 4 + 1] title memory_label[k], \
     for [j=1:ncompute] roof(x, compute_dram[j], compute_gflops[j]) \
       with lines lt compute_lt[j] dt 1 lw 2.5 title compute_label[j], \
     NaN with points lc rgb '#444444' pt 12 ps 2 \
       title 'ridge point (roof meets main memory)', \
     for [i=1:nseries] datafile index (i-1) using 1:2 \
       with points lt series_lt[i] pt series_pt[i] ps 1.6 lw 1.5 \
       title label[i]
