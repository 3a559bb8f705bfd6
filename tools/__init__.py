"""The host-side tools, one package per concern (docs/layers.md):

    image/    build the boot image, boot it under QEMU, write it to a stick
    model/    the cache model's host side: its @@MODEL lines, cost, validation
    results/  a run's figures: parse, join with the model, report, plot
    runner/   the test runner: every host test and boot of make test
    checks/   checks of the tree: layers, the docs' figures, Promela models
    labs/     the coding labs' grader and their quoted output

Run a tool as a module from the repository's root, e.g.
`python3 -m tools.runner.testrun --list`; a tool imports another by its
full name (`from tools.image import qemu`), never by editing sys.path.
"""
