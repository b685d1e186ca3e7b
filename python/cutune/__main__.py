"""python -m cutune SCRIPT.py [args...]: runs a Kernel Tuner script unchanged, its
`import kernel_tuner` resolving to cutune, so tune_kernel tunes with cutune's engine.
python -m cutune --dry-run [--out DIR] SCRIPT.py [args...]: every tune_kernel call builds its space and
writes its T1 run folder under DIR (default ./cutune-dry-run/<script>), nothing is compiled or timed.
python -m cutune --capture ...: the T1 capture (cutune_capture), for `cutune tune` by hand."""
import os
import runpy
import sys


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "--capture":
        from cutune_capture.__main__ import main as capture_main
        return capture_main(argv[1:])
    if argv and argv[0] == "--dry-run":
        from . import dry_run
        argv = argv[1:]
        out = None
        if len(argv) >= 2 and argv[0] == "--out":
            out, argv = argv[1], argv[2:]
        if not argv:
            print("cutune: --dry-run needs a script", file=sys.stderr)
            return 2
        dry_run.OUT = os.path.abspath(out or os.path.join("cutune-dry-run",
                                                          os.path.splitext(os.path.basename(argv[0]))[0]))
        os.makedirs(dry_run.OUT, exist_ok=True)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    script = argv[0]
    if not os.path.isfile(script):
        print(f"cutune: {script}: no such script", file=sys.stderr)
        return 2
    from . import kt_alias
    kt_alias.install()
    script = os.path.abspath(script)
    sys.argv = [script] + argv[1:]
    sys.path.insert(0, os.path.dirname(script))  # as `python SCRIPT` does
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
