"""Multiple choice: a transformer scoring each (context, choice) pair, and its reader."""
