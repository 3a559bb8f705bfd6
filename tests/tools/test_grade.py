#!/usr/bin/env python3
"""Tests of tools/labs/grade.py's text handling: the lab regions of a source,
splicing a student's regions into the kernel's source, dropping the
kernel's code into a skeleton, reading one check's verdict from KTAP.
Builds and runs nothing (the test_grade_<lab> host tests do that).

Data: small synthetic sources written here. Run from the root:
python3 -m unittest tests/tools/test_grade.py
"""

import os
import unittest
from unittest import mock

from tools.labs import grade

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


KERNEL = """/* the kernel's file */
int helper(void) { return 1; }
/* lab demo/one: begin (docs/labs/README.md) */
int one(void)
{
	return helper();
}
/* lab demo/one: end */
int between(void) { return 2; }
/* lab other/x: begin */
int x(void) { return 0; }
/* lab other/x: end */
/* lab demo/two: begin */
int two(void) { return 2; }
/* lab demo/two: end */
"""

SKELETON = """/* the skeleton: its own header */

/* lab demo/one: begin */
/* contract and hints */
int one(void)
{
	return 0; /* TODO */
}
/* lab demo/one: end */

/* lab demo/two: begin */
int two(void) { return 0; }
/* lab demo/two: end */
"""

LAB = {"demo": {"source": "mm/demo.c", "programs": {"demo": "test_demo"},
                "doc": "docs/labs/x.md", "title": "demo",
                "checks": [("demo.a", 5)]}}


def patched(fn):
    """Run fn with the lab table holding "demo" and mm/demo.c reading
    as KERNEL."""
    real_read = grade.read

    def read(path):
        return KERNEL if path == "mm/demo.c" else real_read(path)

    return mock.patch.object(grade, "read", read)(
        mock.patch.dict(grade.LABS, LAB)(fn))


class Regions(unittest.TestCase):
    def test_finds_the_labs_regions_only(self):
        self.assertEqual(grade.regions(KERNEL, "demo", "k"),
                         {"one": (2, 7), "two": (12, 14)})
        self.assertEqual(grade.regions(KERNEL, "other", "k"),
                         {"x": (9, 11)})

    def test_broken_markers_are_errors(self):
        for text in ("/* lab demo/a: begin */\n",
                     "/* lab demo/a: end */\n",
                     "/* lab demo/a: begin */\n/* lab demo/b: begin */\n",
                     "/* lab demo/a: begin */\n/* lab demo/b: end */\n",
                     "/* lab demo/a: begin */\n/* lab demo/a: end */\n"
                     "/* lab demo/a: begin */\n/* lab demo/a: end */\n"):
            with self.assertRaises(grade.GradeError, msg=text):
                grade.regions(text, "demo", "f")


class Splice(unittest.TestCase):
    @patched
    def test_student_lines_replace_the_kernels_under_line_directives(self):
        out = grade.splice("demo", SKELETON, "labs/demo/demo.c").split("\n")
        self.assertIn("\treturn 0; /* TODO */", out)
        self.assertNotIn("\treturn helper();", out)
        self.assertIn("int between(void) { return 2; }", out)
        self.assertIn("int x(void) { return 0; }", out)  # other lab kept
        # The line after each #line directive is the line it names.
        for i, line in enumerate(out):
            if line.startswith("#line "):
                n, path = line.split()[1], line.split()[2].strip('"')
                src = SKELETON if path == "labs/demo/demo.c" else KERNEL
                self.assertEqual(src.split("\n")[int(n) - 1], out[i + 1])

    @patched
    def test_a_missing_region_is_an_error(self):
        broken = SKELETON.replace("/* lab demo/two: end */", "")
        with self.assertRaises(grade.GradeError):
            grade.splice("demo", broken, "s.c")
        with self.assertRaises(grade.GradeError):
            grade.splice("demo", SKELETON.split("/* lab demo/two")[0], "s.c")

    @patched
    def test_kernel_code_in_the_skeleton_splices_back_to_the_kernel(self):
        ref = grade.with_kernel_code("demo", SKELETON)
        self.assertTrue(ref.startswith("/* the skeleton: its own header"))
        self.assertIn("\treturn helper();", ref)
        self.assertNotIn("TODO", ref)
        out = grade.splice("demo", ref, "labs/demo/demo.c")
        self.assertEqual([l for l in out.split("\n")
                          if not l.startswith("#line ")],
                         KERNEL.split("\n"))


class Verdict(unittest.TestCase):
    OUT = ("KTAP version 1\n1..1\n    KTAP version 1\n"
           "    # Subtest: demo\n    1..1\n"
           "    # t.c:3: expected a == b\n    not ok 1 a\nnot ok 1 demo\n")

    def test_ok_not_ok_skip_and_missing(self):
        self.assertEqual(grade.verdict(self.OUT, "a"),
                         (False, ["# t.c:3: expected a == b"]))
        self.assertEqual(grade.verdict(self.OUT.replace("not ok 1 a",
                                                        "ok 1 a"), "a")[0],
                         True)
        self.assertFalse(grade.verdict(self.OUT.replace(
            "not ok 1 a", "ok 1 a # SKIP no x"), "a")[0])
        self.assertIsNone(grade.verdict(self.OUT, "b"))
        self.assertIsNone(grade.verdict("KTAP version 1\npanic: x\n", "a"))


if __name__ == "__main__":
    unittest.main()
