"""What the public and hidden tests of a problem share; shipped to students with the public tests."""
