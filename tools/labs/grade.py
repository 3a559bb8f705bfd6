#!/usr/bin/env python3
"""The coding labs' grader: builds a lab's host tests with the student's
code in place of the kernel's own and scores each check, like the graders
of MIT's 6.1810 labs (docs/labs/README.md).

A lab replaces one or more regions of one kernel source. In the kernel
source (mm/buddy.c, say) a region sits between two marker lines

    /* lab buddy/merge: begin (docs/labs/README.md) */
    static void free_block(...) { ... }
    /* lab buddy/merge: end */

and the lab's skeleton (labs/buddy/buddy.c), the file the student edits,
holds the same markers around the student's version. The grader writes a
copy of the kernel source with each region's lines taken from the
student's file (under #line directives, so compiler and sanitizer
messages name the student's file and line), builds the lab's host test
programs with that copy in place of the kernel's file (make grade-build:
the flags and sanitizers of make test) and scores each check: a check is
one KTAP test of such a program, run alone in a process of its own (the
program's argument "suite.test"), worth its points when it reports ok.
A crash or a hang costs that check only.

  grade.py LAB              grade labs/LAB/'s file (make grade LAB=...)
  grade.py --file F LAB     grade file F instead
  grade.py --reference LAB  grade the kernel's own code, dropped into
                            the skeleton's regions
  grade.py --list           the labs
  grade.py --selftest [--ktap] [LAB ...]
                            every grader can fail and can pass: the
                            skeleton as committed (git's index; the file
                            itself outside git) scores 0 on every check,
                            the kernel's own code full marks

Python 3 standard library only.
"""

import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
GRADE_DIR = os.path.join("build", "grade")
RUN_TIMEOUT_S = 60    # one test program; a student's loop must not hang us
BUILD_TIMEOUT_S = 300
DIAG_LINES = 8        # a failed check's "# ..." lines shown, at most

# Each lab: the kernel source it replaces regions of, the test programs
# (tests/host/<program>.c) by the suite they hold, the lab's page, and
# the checks as ("suite.test", points). A check is a test that exercises
# the lab's code: the selftest proves the skeleton fails each one.
LABS = {
    "buddy": {
        "source": "mm/buddy.c",
        "programs": {"buddy": "test_buddy"},
        "doc": "docs/labs/12-allocators.md",
        "title": "the buddy allocator's split and merge",
        "checks": [
            ("buddy.split_and_merge_counters", 10),
            ("buddy.exhaust_then_free_all", 5),
            ("buddy.exhaust_order0", 5),
            ("buddy.double_free_after_merge", 5),
            ("buddy.random_ops_shadow", 10),
            ("buddy.small_max_order_stress", 10),
        ],
    },
    "kmalloc": {
        "source": "mm/kmalloc.c",
        "programs": {"kmalloc": "test_kmalloc"},
        "doc": "docs/labs/12-allocators.md",
        "title": "kmalloc's free path: an object back to its slab",
        "checks": [
            ("kmalloc.full_slabs_distinct_objects", 5),
            ("kmalloc.fill_and_check_many", 5),
            ("kmalloc.bad_frees_panic", 5),
            ("kmalloc.use_after_free_caught", 5),
            ("kmalloc.random_against_shadow", 10),
            ("kmalloc.percpu_drain_returns_every_page", 10),
        ],
    },
    "fwmap": {
        "source": "mm/fwmap.c",
        "programs": {"fwmap": "test_fwmap"},
        "doc": "docs/labs/12-allocators.md",
        "title": "the firmware map's overlap rule",
        "checks": [
            ("fwmap.reserved_inside_available", 5),
            ("fwmap.available_over_reserved", 5),
            ("fwmap.partial_overlaps_and_ranks", 5),
            ("fwmap.unsorted_input", 5),
            ("fwmap.adjacent_merge_and_duplicates", 5),
            ("fwmap.output_overflow_split_is_safe", 5),
            ("fwmap.reserve_carving", 5),
            ("fwmap.fuzz_against_model", 10),
        ],
    },
    "radix_gang": {
        "source": "mm/radix_tree.c",
        "programs": {"radix_tree": "test_radix_tree"},
        "doc": "docs/labs/08-page-cache.md",
        "title": "the radix tree's RCU gang lookup",
        "checks": [
            ("radix_tree.dense_shift3", 5),
            ("radix_tree.sparse_shift3", 5),
            ("radix_tree.random_shift3", 10),
            ("radix_tree.dense_shift6", 5),
            ("radix_tree.sparse_shift6", 5),
            ("radix_tree.random_shift6", 10),
        ],
    },
    "tlb_gather": {
        "source": "mm/tlb_gather.c",
        "programs": {"tlb_gather": "test_tlb_gather"},
        "doc": "docs/labs/09-tlb-shootdowns.md",
        "title": "batching shootdowns in the TLB gather",
        "checks": [
            ("tlb_gather.frees_only_after_the_flush", 5),
            ("tlb_gather.drops_page_references_only_after_the_flush", 5),
            ("tlb_gather.one_space_flushes_the_union", 5),
            ("tlb_gather.several_spaces_or_a_table_flush_everything", 5),
            ("tlb_gather.kernel_half_goes_to_every_cpu", 5),
            ("tlb_gather.full_array_flushes_early_and_loses_nothing", 5),
            ("tlb_gather.table_after_an_early_flush_is_still_flushed_first", 5),
            ("tlb_gather.chained_pages_never_flush_early", 5),
        ],
    },
}

MARKER_RE = re.compile(r"^/\* lab (\w+)/(\w+): (begin|end)\b.*\*/\s*$")
RESULT_RE = re.compile(r"^    (ok|not ok) \d+ (\S+)(.*)$")  # one test's line
# KTAP's frame around one test's lines: not worth showing.
KTAP_FRAME_RE = re.compile(r"^\s*(KTAP version \d+|\d+\.\.\d+|# Subtest: .*)$")


class GradeError(Exception):
    """A problem with the lab's files or the build, not with a check."""


def skeleton_path(lab):
    return os.path.join("labs", lab, os.path.basename(LABS[lab]["source"]))


def regions(text, lab, path):
    """The lab's regions of text: {part: (begin, end)}, the line indices
    of the two marker lines. Raises GradeError for a broken marker."""
    found, open_part = {}, None
    for i, line in enumerate(text.split("\n")):
        m = MARKER_RE.match(line)
        if not m or m.group(1) != lab:
            continue
        part, what = m.group(2), m.group(3)
        if what == "begin":
            if open_part is not None:
                raise GradeError("%s:%d: region %s/%s begins inside %s/%s"
                                 % (path, i + 1, lab, part, lab, open_part[0]))
            if part in found:
                raise GradeError("%s:%d: region %s/%s appears twice" %
                                 (path, i + 1, lab, part))
            open_part = (part, i)
        else:
            if open_part is None or open_part[0] != part:
                raise GradeError("%s:%d: end of region %s/%s without its "
                                 "begin" % (path, i + 1, lab, part))
            found[part] = (open_part[1], i)
            open_part = None
    if open_part is not None:
        raise GradeError("%s: region %s/%s has no end line" %
                         (path, lab, open_part[0]))
    return found


def kernel_regions(lab):
    src = LABS[lab]["source"]
    text = read(src)
    reg = regions(text, lab, src)
    if not reg:
        raise GradeError("%s: no region of lab %s" % (src, lab))
    return text, reg


def splice(lab, student_text, student_path):
    """The kernel source with each region's body from student_text."""
    src = LABS[lab]["source"]
    ktext, kreg = kernel_regions(lab)
    sreg = regions(student_text, lab, student_path)
    missing = sorted(set(kreg) - set(sreg))
    extra = sorted(set(sreg) - set(kreg))
    if missing or extra:
        raise GradeError(
            "%s: regions %s expected (their begin and end lines must stay "
            "as they are); missing %s, unknown %s" %
            (student_path, ", ".join(lab + "/" + p for p in sorted(kreg)),
             missing or "none", extra or "none"))
    klines, slines = ktext.split("\n"), student_text.split("\n")
    out, pos = [], 0
    for part, (kb, ke) in sorted(kreg.items(), key=lambda kv: kv[1][0]):
        sb, se = sreg[part]
        out += klines[pos:kb + 1]
        out.append('#line %d "%s"' % (sb + 2, student_path))
        out += slines[sb + 1:se]
        out.append('#line %d "%s"' % (ke + 1, src))
        pos = ke
    out += klines[pos:]
    return "\n".join(out)


def with_kernel_code(lab, skeleton_text):
    """The skeleton with the kernel's own code in each region: what a
    student who wrote exactly the kernel's code would hand in."""
    ktext, kreg = kernel_regions(lab)
    sreg = regions(skeleton_text, lab, skeleton_path(lab))
    klines, slines = ktext.split("\n"), skeleton_text.split("\n")
    out, pos = [], 0
    for part, (sb, se) in sorted(sreg.items(), key=lambda kv: kv[1][0]):
        if part not in kreg:
            raise GradeError("%s: region %s/%s is not in %s" %
                             (skeleton_path(lab), lab, part,
                              LABS[lab]["source"]))
        kb, ke = kreg[part]
        out += slines[pos:sb + 1] + klines[kb + 1:ke]
        pos = se
    out += slines[pos:]
    return "\n".join(out)


def read(path):
    with open(path) as f:
        return f.read()


def committed_skeleton(lab):
    """The skeleton as git's index has it (so a solved lab in a working
    tree does not fail make test); the file itself outside git."""
    path = skeleton_path(lab)
    try:
        p = subprocess.run(["git", "show", ":" + path],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        p = None
    if p is not None and p.returncode == 0:
        return p.stdout.decode("utf-8")
    return read(path)


def build(lab, variant, spliced):
    """Write the spliced source and build each of the lab's programs with
    it; returns {suite: program path}. Raises GradeError with the
    compiler's output when a build fails."""
    info = LABS[lab]
    where = os.path.join(GRADE_DIR, lab, variant)
    src = os.path.join(where, info["source"])
    os.makedirs(os.path.dirname(src), exist_ok=True)
    with open(src, "w") as f:
        f.write(spliced)
    # A make above us (make test) must not lend its jobserver to this one.
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    progs = {}
    for suite, program in sorted(info["programs"].items()):
        prog = os.path.join(where, program)
        if os.path.exists(prog):
            os.unlink(prog)
        # Objects per program: their sanitizers differ (ASan, TSan).
        cmd = ["make", "-s", "--no-print-directory", "grade-build",
               "GRADE_PROG=" + program, "GRADE_REPLACES=" + info["source"],
               "GRADE_FILE=" + src, "GRADE_OUT=" + prog,
               "GRADE_OBJDIR=" + os.path.join(GRADE_DIR, lab, "obj", program)]
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL,
                               timeout=BUILD_TIMEOUT_S, env=env)
        except subprocess.TimeoutExpired:
            raise GradeError("build of %s: no result after %d s" %
                             (program, BUILD_TIMEOUT_S))
        if p.returncode != 0 or not os.path.exists(prog):
            lines = p.stdout.decode("utf-8", "replace").rstrip().split("\n")
            raise GradeError("build of %s failed:\n" % program + "\n".join(
                l for l in lines if not l.startswith("make: ***")))
        progs[suite] = prog
    return progs


def run(prog, which):
    """Run the program on one check: (output, how it ended)."""
    try:
        p = subprocess.run([prog, which], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                           timeout=RUN_TIMEOUT_S)
        out = p.stdout.decode("utf-8", "replace")
        end = "exit %d" % p.returncode if p.returncode >= 0 else \
            "killed by signal %d" % -p.returncode
    except subprocess.TimeoutExpired as err:
        out = (err.stdout or b"").decode("utf-8", "replace")
        end = "no exit after %d s (a loop that never ends?)" % RUN_TIMEOUT_S
    return out, end


def verdict(out, test):
    """(passed, lines worth showing) of test in the program's KTAP; None
    when the program never reported it (it crashed or hung first)."""
    diag = []
    for line in out.split("\n"):
        m = RESULT_RE.match(line)
        if m and m.group(2) == test:
            if "# SKIP" in m.group(3):
                return False, diag + ["skipped:" + m.group(3)[7:]]
            return m.group(1) == "ok", diag
        if line.startswith("    #") and not line.startswith("    # Subtest:"):
            diag.append(line.strip())
    return None


def grade(lab, student_text, student_path, variant, say=print):
    """Score student_text, each check in a process of its own (a crash
    costs that check only); returns (score, total). Prints a line per
    check through say(). Raises GradeError when it does not build."""
    progs = build(lab, variant, splice(lab, student_text, student_path))
    score = total = 0
    for check, points in LABS[lab]["checks"]:
        suite, test = check.split(".", 1)
        total += points
        out, end = run(progs[suite], check)
        v = verdict(out, test)
        if v is None:
            ok, why = False, "did not finish (%s); its last lines:" % end
            show = ["| " + l for l in out.rstrip("\n").split("\n")
                    if l.strip() and not KTAP_FRAME_RE.match(l)][-DIAG_LINES:]
        else:
            ok, show = v[0], v[1][:DIAG_LINES]
            why = ""
        score += points if ok else 0
        say("%s: %s (%d/%d)%s" % (check, "OK" if ok else "FAIL",
                                   points if ok else 0, points,
                                   " " + why if why else ""))
        for line in ([] if ok else show):
            say("    " + line)
    return score, total


def grade_cli(lab, path, reference):
    info = LABS[lab]
    print("== lab %s: %s" % (lab, info["title"]))
    try:
        if reference:
            text = with_kernel_code(lab, read(skeleton_path(lab)))
            path, variant = skeleton_path(lab), "reference"
        else:
            path = path or skeleton_path(lab)
            text, variant = read(path), "student"
        print("   your code: %s, in place of %s's in the regions %s; "
              "checks: %s; the lab: %s" %
              ("the kernel's own" if reference else path, info["source"],
               ", ".join(lab + "/" + p
                         for p in sorted(kernel_regions(lab)[1])),
               ", ".join("tests/host/%s.c" % p
                         for p in sorted(info["programs"].values())),
               info["doc"]))
        score, total = grade(lab, text, path, variant)
    except (OSError, GradeError) as err:
        print(str(err))
        print("Score: 0/%d" % sum(p for _, p in info["checks"]))
        return 1
    print("Score: %d/%d" % (score, total))
    return 0 if score == total else 1


def selftest(lab):
    """The two gradings of a lab's selftest: [(name, ok, lines)]. Every
    check is worth points, so a score of 0 means every check failed."""
    checks = LABS[lab]["checks"]
    total = sum(p for _, p in checks)
    well_formed = bool(checks) and all(p > 0 for _, p in checks)
    out = []
    skel = committed_skeleton(lab)
    for name, text, variant, want in (
            ("skeleton_scores_0", skel, "skeleton", 0),
            ("kernel_code_scores_full", None, "reference", total)):
        lines = []
        try:
            if text is None:
                text = with_kernel_code(lab, skel)
            score, _ = grade(lab, text, skeleton_path(lab), variant,
                             say=lines.append)
            lines.append("score %d/%d, expected %d" % (score, total, want))
            ok = score == want and well_formed
        except GradeError as err:
            # A skeleton that does not build would score 0 for the wrong
            # reason: the student must start from code that compiles.
            lines = str(err).split("\n")
            ok = False
        out.append((name, ok, lines))
    return out


def selftest_cli(labs, ktap):
    failures = 0
    if ktap:
        print("KTAP version 1")
        print("1..%d" % len(labs))
    for n, lab in enumerate(labs, 1):
        res = selftest(lab)
        bad = [r for r in res if not r[1]]
        failures += len(bad)
        if ktap:
            print("    KTAP version 1")
            print("    # Subtest: grade_%s" % lab)
            print("    1..%d" % len(res))
            for i, (name, ok, lines) in enumerate(res, 1):
                for line in lines:
                    print("    # " + line)
                print("    %s %d %s" % ("ok" if ok else "not ok", i, name))
            print("%s %d grade_%s" % ("not ok" if bad else "ok", n, lab))
        else:
            for name, ok, lines in res:
                print("%s: %s: %s" % (lab, name, "ok" if ok else "FAILED"))
                for line in ([] if ok else lines):
                    print("    " + line)
    if ktap:
        print("# ktest: %d lab(s), %d failure(s)" % (len(labs), failures))
    return 1 if failures else 0


def main(argv):
    ap = argparse.ArgumentParser(
        prog="python3 -m " + __spec__.name, description=__doc__.split("\n")[0])
    ap.add_argument("labs", nargs="*", metavar="LAB")
    ap.add_argument("--list", action="store_true", help="list the labs")
    ap.add_argument("--file", help="grade this file instead of the skeleton")
    ap.add_argument("--reference", action="store_true",
                    help="grade the kernel's own code")
    ap.add_argument("--selftest", action="store_true",
                    help="skeleton scores 0, kernel's code full marks")
    ap.add_argument("--ktap", action="store_true",
                    help="with --selftest: KTAP, for make test")
    args = ap.parse_args(argv)
    os.chdir(ROOT)
    unknown = [l for l in args.labs if l not in LABS]
    if unknown:
        print("grade: no lab named %s; the labs: %s" %
              (", ".join(unknown), ", ".join(sorted(LABS))), file=sys.stderr)
        return 2
    if args.list or (not args.labs and not args.selftest):
        print("The coding labs (make grade LAB=<name>; docs/labs/README.md):")
        for lab in sorted(LABS):
            print("  %-11s %s (%s; you edit %s)" %
                  (lab, LABS[lab]["title"], LABS[lab]["doc"],
                   skeleton_path(lab)))
        return 0
    if args.selftest:
        return selftest_cli(args.labs or sorted(LABS), args.ktap)
    if len(args.labs) != 1:
        ap.error("grade one lab at a time")
    return grade_cli(args.labs[0], args.file, args.reference)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
