#!/usr/bin/env python3
"""Write a copy of a profile whose strings are hostile to HTML and gnuplot:
markup, quotes, ampersands, newlines, backslashes, very long names.
Usage: report_hostile.py IN OUT"""
import json
import sys

EVIL = "<script>alert(\"x\")</script> & 'q' \\ `id` @x\nnext line"
LONG = "Very-long-device-name-" * 12

d = json.load(open(sys.argv[1]))
d["device_name"] = EVIL + " " + LONG
d["machine"]["hostname"] = "<b>host</b>&amp;\"'"
d["machine"]["cpu"]["brand"] = "</td></tr></table><img src=http://x/y>"
d["quality"]["warnings"].append("<iframe src=\"https://evil\"></iframe> &")
d["batch_sweep"]["model"]["preset"] = "<svg onload=alert(1)>"
for p in d["gemm"]["points"][:3]:
    p["engine"] = "<eng\"ine>&"
for k in d["roofline"]["kernels"][:4]:
    k["kernel"] = "<k>\"" + k["kernel"]
d["attention"]["points"][0]["status"] = "failed"
d["attention"]["points"][0]["reason"] = "<script>bad()</script>\nreason"
json.dump(d, open(sys.argv[2], "w"), indent=1)
