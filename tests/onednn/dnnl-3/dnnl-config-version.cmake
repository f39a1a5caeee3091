# A stand-in for oneDNN 3.1.0's version file (onednn_version.sh).
set(PACKAGE_VERSION 3.1.0)
set(PACKAGE_VERSION_COMPATIBLE TRUE)
