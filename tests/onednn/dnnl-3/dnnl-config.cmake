# A stand-in for oneDNN 3.1.0's package config (onednn_version.sh).
set(DNNL_CPU_RUNTIME OMP)
