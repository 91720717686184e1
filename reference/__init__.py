"""The reference solution: the same modules as student_stubs/, implemented. Never shipped to students."""
