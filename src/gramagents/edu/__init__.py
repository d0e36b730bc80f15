"""EduEval's rubric judges and the agreement of judges with human raters."""
