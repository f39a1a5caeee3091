# A stand-in for oneDNN 2.7.3's package config (onednn_version.sh).
set(DNNL_CPU_RUNTIME OMP)
