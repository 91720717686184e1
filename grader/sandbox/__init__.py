"""Where a submission's code runs: a worker process the grader can kill, confined by one
isolation mode and limited by rlimits, a cgroup and deadlines.

    sandbox.py    ``Sandbox``: an ``Impl`` whose calls run in a worker (the frame protocol, deadlines)
    zygote.py     ``Zygote``: the grader's handle on the confined process that imported torch once
                  and forks each worker (that process's own code: zygote_server.py)
    template.py   ``Template``: a batch job's torch-ready process that forks each student's zygote,
                  which enters its own sandbox (``Zygotes``: where a job gets one per student)
    isolation.py  the modes (bwrap, namespaces, landlock, uid, process): each one's decisions on
                  its ``Isolation`` (which one works here, what the report says)
    view.py       what a worker may see: its Python, a namespaced root, Landlock's rules
    launch.py     how a zygote is started from its mode's decisions (the command, its config)
    uids.py       the unprivileged uids a worker runs as, one leased per concurrent sandbox
    zygote_server.py  the zygote's script (copied into the sandbox with seam/, run with python -I)
    worker.py     the worker's code: the zygote's fork for one submission confines itself, then serves
    spawn.py      the template's script: fork a zygote, enter its cgroup and namespaces
    landlock.py, seccomp.py   walls the worker raises on itself (copied beside worker.py)
    folders.py    walks of a student's folders without recursion: measure, empty, remove (copied too)
    cgroup.py     memory and processes of one sandbox together
    limits.py     every limit's default, and what a student reads when a call meets one
    procs.py      /proc readings: a process tree, its memory, a folder's bytes

Nothing here imports torch at import time but the zygote, worker and template scripts, which run elsewhere.
"""
