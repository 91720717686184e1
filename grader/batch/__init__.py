"""`python -m grader batch` and what reads its output: a class graded by job processes.

    scheduler.py  the command: roster, shard, which students to (re)grade, jobs side by side
    job.py        one grader process (``python -m grader.batch.job``): imports torch once and
                  grades upload after upload, each in a fresh sandbox
    roster.py     who is in the class (a folder of uploads or Gradescope's export)
    shards.py     stable, disjoint slices of the class (Slurm arrays, Kubernetes indexed Jobs)
    output.py     the output folder: one ``StudentRecord`` per student, the status enum, the gradebook
    attention.py  what a TA must act on: uploads at or near zero, what hung or crashed, GPU points to come
    merge.py      shards of one pass, or a CPU and a GPU pass, joined
    export.py     the gradebook as the CSV Gradescope or Canvas imports
"""
