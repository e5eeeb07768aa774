"""Model engines behind one protocol (base.ModelClient): Gemini and the offline engine."""
