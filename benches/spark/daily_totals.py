"""Daily totals from `skein export parquet`'s usage/ table with PySpark (local mode, 2 cores):
requests, the four token sums and the cost per UTC day, one JSON object per line on stdout,
ordered by day. benches/spark/run.sh runs it and compares it with `skein usage daily`.

usage: daily_totals.py DATASET
"""

import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

TOKENS = ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"]


def main():
    dataset = sys.argv[1]
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("skein-daily-totals")
        # Days are UTC days, as `skein usage daily --timezone UTC` counts them.
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    # Spark discovers the month=… (and project=…) partitions itself.
    usage = spark.read.parquet(f"{dataset}/usage")
    daily = (
        usage.groupBy(F.date_format("timestamp", "yyyy-MM-dd").alias("date"))
        .agg(
            F.count(F.lit(1)).alias("requests"),
            *[F.sum(c).alias(c) for c in TOKENS],
            F.sum("cost_usd").alias("cost_usd"),
        )
        .orderBy("date")
    )
    for row in daily.collect():
        print(json.dumps(row.asDict()))
    spark.stop()


main()
