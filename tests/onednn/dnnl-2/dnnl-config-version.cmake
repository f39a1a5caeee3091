# A stand-in for oneDNN 2.7.3's version file (onednn_version.sh).
set(PACKAGE_VERSION 2.7.3)
set(PACKAGE_VERSION_COMPATIBLE TRUE)
