"""The coding labs (docs/labs/): grade.py grades a student's code against
the lab's host tests, labs.py keeps the labs' quoted output real. On
top."""
