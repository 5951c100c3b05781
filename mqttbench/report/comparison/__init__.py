"""The comparison's document: compare.md, its tables and charts
(write.py), the rounds' regression verdicts (rounds.py, regress.py, against
a baseline: baseline.py) and the page of docs/ a comparison fills
(docs_page.py). mqttbench/compare runs the columns; this renders them."""
