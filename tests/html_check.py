#!/usr/bin/env python3
"""Check a calibrate report page: well-formed (every element closed in
order, nothing left open), self-contained (no reference to anything outside
it: no http:, https:, //, @import or url( in any tag, attribute,
stylesheet or comment; text is checked by the parser, not by matching
words, so an escaped hostile name in the text is no reference) and, with
--forbid TEXT, that TEXT appears nowhere as markup.
Usage: html_check.py FILE [--forbid TEXT]...  Exit 0 good, 1 with one
line per problem."""
import sys
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link",
        "meta", "source", "track", "wbr"}
URL_ATTRS = {"src", "href", "xlink:href", "action", "data", "poster",
             "srcset", "background", "formaction"}


class Checker(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.problems, self.tags = [], [], []

    def where(self):
        return "line %d" % self.getpos()[0]

    def attrs_check(self, tag, attrs):
        self.tags.append(tag)
        if tag in ("script", "link", "iframe", "object", "embed", "img",
                   "base", "audio", "video", "source"):
            self.problems.append("%s: <%s> is not allowed" % (self.where(), tag))
        for k, v in attrs:
            self.external(v or "", "attribute %s" % k)
            if k.startswith("on"):
                self.problems.append("%s: event handler %s" % (self.where(), k))
            if k in URL_ATTRS and v is not None and not v.startswith("#"):
                self.problems.append("%s: %s=%r refers outside the page"
                                     % (self.where(), k, v))
            if k == "style" and v and "url(" in v.replace(" ", "").lower():
                self.problems.append("%s: url( in a style" % self.where())

    def external(self, text, what):
        """A reference outside the page anywhere in markup or CSS."""
        low = text.lower().replace(" ", "")
        for bad in ("http:", "https:", "ftp:", "file:", "data:", "@import"):
            if bad in low:
                self.problems.append("%s: %r in %s refers outside the page"
                                     % (self.where(), bad, what))
        if low.startswith("//") or "url(" in low and "url(#" not in low:
            self.problems.append("%s: %s refers outside the page (%s)"
                                 % (self.where(), what, text[:60]))

    def handle_data(self, data):
        if self.stack and self.stack[-1][0] == "style":
            self.external(data, "a stylesheet")

    def handle_comment(self, data):
        self.external(data, "a comment")

    def handle_decl(self, decl):
        self.external(decl, "a declaration")

    def handle_pi(self, data):
        self.external(data, "a processing instruction")

    def handle_starttag(self, tag, attrs):
        self.attrs_check(tag, attrs)
        if tag not in VOID:
            self.stack.append((tag, self.where()))

    def handle_startendtag(self, tag, attrs):
        self.attrs_check(tag, attrs)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack:
            self.problems.append("%s: </%s> closes nothing" % (self.where(), tag))
            return
        top, at = self.stack.pop()
        if top != tag:
            self.problems.append("%s: </%s> closes <%s> opened at %s"
                                 % (self.where(), tag, top, at))


def main():
    args = sys.argv[1:]
    if not args:
        print("usage: html_check.py FILE [--forbid TEXT]...", file=sys.stderr)
        return 2
    path, forbid = args[0], []
    i = 1
    while i < len(args):
        if args[i] == "--forbid" and i + 1 < len(args):
            forbid.append(args[i + 1])
            i += 2
        else:
            print("html_check.py: unknown argument %s" % args[i], file=sys.stderr)
            return 2
    with open(path, encoding="utf-8") as f:
        text = f.read()
    c = Checker()
    c.feed(text)
    c.close()
    problems = list(c.problems)
    for tag, at in c.stack:
        problems.append("<%s> opened at %s is never closed" % (tag, at))
    if not text.lstrip().lower().startswith("<!doctype html>"):
        problems.append("no <!DOCTYPE html> at the start")
    for t in ("html", "head", "body", "title", "style"):
        if t not in c.tags:
            problems.append("no <%s>" % t)
    for t in forbid:
        if t in text:
            problems.append("%r appears unescaped" % t)
    for p in problems:
        print("html_check: %s: %s" % (path, p))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
