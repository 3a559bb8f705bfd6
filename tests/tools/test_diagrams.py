#!/usr/bin/env python3
"""Tests of the diagrams of docs/diagrams/: every Graphviz source has its
SVG beside it and every SVG its source; every image a doc links exists;
each doc links the diagram drawn for it; the PAT x MTRR diagram's table
is the one docs/memtypes.md gives, cell by cell; and, where Graphviz is
installed, every source renders and its committed SVG is not stale (same
texts as a fresh rendering: `make diagrams` was run after the last edit).

Sources under test: docs/diagrams/*.dot, docs/diagrams/*.svg, the image
links of docs/*.md, the Makefile's `diagrams` target (its dot command).

Run: python3 -m unittest tests/tools/test_diagrams.py
"""

import glob
import html
import os
import re
import shutil
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DOCS = os.path.join(ROOT, "docs")
DIAGRAMS = os.path.join(DOCS, "diagrams")
DOT_TIMEOUT_S = 60

# Each diagram and the doc it serves.
SERVED = {
    "memtype_pat_mtrr": "memtypes.md",
    "tlb_shootdown": "tlb.md",
    "ring_buffer": "trace.md",
    "rcu_radix": "pagecache.md",
    "cachemodel_miss": "cachemodel.md",
}

IMAGE_LINK = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
SVG_TEXT = re.compile(r"<text[^>]*>([^<]*)</text>")
HTML_CELL = re.compile(r"<td[^>]*>(.*?)</td>", re.S)
MD_ROW = re.compile(r"^\|(.+)\|\s*$")


def names(ext):
    return sorted(os.path.splitext(os.path.basename(p))[0]
                  for p in glob.glob(os.path.join(DIAGRAMS, "*." + ext)))


def svg_texts(svg):
    """The texts an SVG shows, sorted (layout coordinates ignored)."""
    return sorted(html.unescape(t) for t in SVG_TEXT.findall(svg))


def strip_tags(s):
    return re.sub(r"<[^>]+>", "", s).strip()


class Files(unittest.TestCase):
    def test_each_source_has_its_svg(self):
        self.assertEqual(names("dot"), names("svg"))
        self.assertEqual(names("dot"), sorted(SERVED))

    def test_doc_images_exist(self):
        links = 0
        for md in glob.glob(os.path.join(DOCS, "**", "*.md"),
                            recursive=True) + \
                [os.path.join(ROOT, "README.md")]:
            with open(md, encoding="utf-8") as f:
                text = f.read()
            for target in IMAGE_LINK.findall(text):
                if "://" in target:
                    continue
                path = os.path.normpath(os.path.join(os.path.dirname(md),
                                                     target))
                self.assertTrue(os.path.isfile(path),
                                "%s links %s, which does not exist" %
                                (os.path.relpath(md, ROOT), target))
                links += 1
        self.assertGreaterEqual(links, len(SERVED))

    def test_each_doc_links_its_diagram(self):
        for name, doc in SERVED.items():
            with open(os.path.join(DOCS, doc), encoding="utf-8") as f:
                targets = IMAGE_LINK.findall(f.read())
            self.assertIn("diagrams/%s.svg" % name, targets, doc)


class MemtypeTable(unittest.TestCase):
    """The diagram's "MTRR \\ PAT" table is docs/memtypes.md's."""

    def doc_table(self):
        with open(os.path.join(DOCS, "memtypes.md"), encoding="utf-8") as f:
            lines = f.read().split("\n")
        start = next(i for i, l in enumerate(lines)
                     if l.startswith("| MTRR \\ PAT"))
        rows = []
        for line in lines[start:]:
            m = MD_ROW.match(line)
            if not m:
                break
            cells = [c.strip() for c in m.group(1).split("|")]
            if not set("".join(cells)) <= set("-: "):
                rows.append(cells)
        return rows

    def dot_table(self):
        with open(os.path.join(DIAGRAMS, "memtype_pat_mtrr.dot"),
                  encoding="utf-8") as f:
            dot = f.read()
        table = dot[dot.rindex("<tr>", 0, dot.index("<b>MTRR \\ PAT")):]
        table = table[:table.index("</table>")]
        rows = []
        for tr in re.findall(r"<tr>(.*?)</tr>", table, re.S):
            cells = [strip_tags(c) for c in HTML_CELL.findall(tr)]
            if len(cells) == 7:
                rows.append(cells)
        return rows

    def test_same_cells(self):
        doc, dot = self.doc_table(), self.dot_table()
        self.assertEqual(len(doc), 6)
        self.assertEqual(dot, doc)


@unittest.skipUnless(shutil.which("dot"), "Graphviz (dot) not installed")
class Rendering(unittest.TestCase):
    def test_sources_render_and_svgs_are_current(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name in names("dot"):
                src = os.path.join(DIAGRAMS, name + ".dot")
                out = os.path.join(tmp, name + ".svg")
                p = subprocess.run(["dot", "-Tsvg", src, "-o", out],
                                   capture_output=True, text=True,
                                   timeout=DOT_TIMEOUT_S)
                self.assertEqual(p.returncode, 0, "%s: %s" %
                                 (name, p.stderr))
                self.assertEqual(p.stderr.strip(), "", name)
                with open(out, encoding="utf-8") as f:
                    fresh = svg_texts(f.read())
                with open(os.path.join(DIAGRAMS, name + ".svg"),
                          encoding="utf-8") as f:
                    committed = svg_texts(f.read())
                self.assertTrue(fresh, name)
                self.assertEqual(committed, fresh,
                                 "%s.svg is stale: run make diagrams" % name)


if __name__ == "__main__":
    unittest.main()
