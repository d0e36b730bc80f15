"""EduEval: exam items per cognitive level (`../shared/seeds/003_*`, `graphs/edu.yaml`)."""

from . import tasks  # noqa: F401 - the task specs every eval of an EduEval bank needs
