# Roofline: for each dtype its roof (main-memory bandwidth x intensity up
# to the dtype's measured peak; int8 in GOPS) in that dtype's colour, a
# dash per machine; each cache level's slope as a grey line; the ridge
# points (where a roof meets main memory) as stars; the measured kernels:
# colour = dtype, marker = kernel family and machine, filled = all
# threads, open = one thread.  No text at the points (it would collide):
# the key names every series.
# Variables: datafile, title, nseries, label[], series_lt[], series_pt[],
# series_dt[], ncompute, compute_gflops[], compute_lt[], compute_dt[],
# compute_dram[] (0: no memory bandwidth, a flat roof), compute_label[],
# nmemory, memory_gbps[], memory_peak[] (0: no roof), memory_grey[],
# memory_dt[], memory_label[], xmin, xmax.
# Data columns: intensity_flop_per_byte gflops "name".
set title title
set logscale xy
set xrange [xmin:xmax]
set xlabel 'arithmetic intensity (FLOP/byte; int8: operations/byte)'
set ylabel 'GFLOPS (GOPS for int8)'
set grid
set samples 400
set key outside right top vertical Left reverse font ',10' spacing 1.1
roof(x, bw, peak) = (bw > 0 && (peak <= 0 || x * bw < peak) ? x * bw : peak)
array grey[4] = ['#999999', '#777777', '#555555', '#333333']
do for [j=1:ncompute] {
  if (compute_dram[j] > 0) {
    set label '' at compute_gflops[j] / compute_dram[j], compute_gflops[j] \
      point lt compute_lt[j] pt 3 ps 2.5 lw 2
  }
}
plot for [k=1:nmemory] roof(x, memory_gbps[k], memory_peak[k]) \
       with lines lw 1.2 dt memory_dt[k] lc rgb grey[memory_grey[k]] \
       title memory_label[k], \
     for [j=1:ncompute] roof(x, compute_dram[j], compute_gflops[j]) \
       with lines lt compute_lt[j] dt compute_dt[j] lw 2.5 \
       title compute_label[j], \
     NaN with points lc rgb '#444444' pt 3 ps 2.5 lw 2 \
       title 'ridge point (roof meets main memory)', \
     for [i=1:nseries] datafile index (i-1) using 1:2 \
       with points lt series_lt[i] pt series_pt[i] ps 1.6 lw 1.5 \
       title label[i]
