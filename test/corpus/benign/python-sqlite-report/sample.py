#!/usr/bin/env python3
"""Benign control: ordinary data work. Builds a SQLite database of sales in /tmp, queries a summary and
writes a CSV report."""
import csv
import random
import sqlite3

db = sqlite3.connect('/tmp/sales.db')
db.execute('CREATE TABLE IF NOT EXISTS sales (region TEXT, amount REAL)')
random.seed(7)
db.executemany('INSERT INTO sales VALUES (?, ?)', [(random.choice('NSEW'), random.random() * 100) for _ in range(500)])
db.commit()
rows = db.execute('SELECT region, COUNT(*), ROUND(SUM(amount), 2) FROM sales GROUP BY region').fetchall()
with open('/tmp/sales-report.csv', 'w', newline='') as out:
    csv.writer(out).writerows([('region', 'count', 'total'), *rows])
print(rows)
