# Billing: record-billing streams one row per namespace event into this table (insertId = the
# event's deterministic id); reports read the de-duplicating view, because insertId
# de-duplication is best-effort only. The topic, the push subscription to record-billing and its
# invoker IAM come from local.reconcilers ("record-billing" = "billing") in triggers.tf.

resource "google_bigquery_dataset" "billing" {
  project    = var.project_id
  dataset_id = var.billing.dataset
  location   = var.billing.location
}

resource "google_bigquery_table" "billing" {
  project             = var.project_id
  dataset_id          = google_bigquery_dataset.billing.dataset_id
  table_id            = var.billing.table
  deletion_protection = true
  # Reports read ranges of days per organization: prune partitions by day, blocks by organization.
  time_partitioning {
    type  = "DAY"
    field = "event_time"
  }
  clustering = ["organization", "cluster"]
  # One file shared with the tests (test/unit/billing/bigquery.test.ts checks it against the row).
  schema = file("${path.module}/billing-schema.json")
}

# Each event id once: the earliest recorded copy wins.
resource "google_bigquery_table" "billing_dedup" {
  project             = var.project_id
  dataset_id          = google_bigquery_dataset.billing.dataset_id
  table_id            = "${var.billing.table}_dedup"
  deletion_protection = false
  view {
    use_legacy_sql = false
    query          = <<-SQL
      SELECT * EXCEPT (copy) FROM (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY recorded_time) AS copy
        FROM `${var.project_id}.${google_bigquery_dataset.billing.dataset_id}.${google_bigquery_table.billing.table_id}`)
      WHERE copy = 1
    SQL
  }
}

# Every complete snapshot (snapshot-end): a billing event older than the latest one, for a
# namespace it did not list, is recorded with that namespace's deletion at the snapshot's time.
# Read per event delivered late (more than the grace after the relay saw its namespace; a relay
# restart's republished events are not), for the days after it: partitioned by day; kept 35 days
# (Pub/Sub keeps an undelivered message 7 at most).
resource "google_bigquery_table" "billing_snapshots" {
  project             = var.project_id
  dataset_id          = google_bigquery_dataset.billing.dataset_id
  table_id            = "${var.billing.table}_snapshots"
  deletion_protection = false
  time_partitioning {
    type          = "DAY"
    field         = "taken_at"
    expiration_ms = 35 * 86400000
  }
  clustering = ["cluster"]
  schema     = file("${path.module}/billing-snapshots-schema.json")
}

# record-billing runs as the reconcilers' account: it streams rows into the table and queries
# the view when a snapshot ends; it keeps snapshots and reads them for late events.
resource "google_bigquery_table_iam_member" "reconciler_billing" {
  for_each = {
    (google_bigquery_table.billing.table_id)           = "roles/bigquery.dataEditor"
    (google_bigquery_table.billing_snapshots.table_id) = "roles/bigquery.dataEditor"
    (google_bigquery_table.billing_dedup.table_id)     = "roles/bigquery.dataViewer"
  }
  project    = var.project_id
  dataset_id = google_bigquery_dataset.billing.dataset_id
  table_id   = each.key
  role       = each.value
  member     = "serviceAccount:${google_service_account.reconciler.email}"
}

resource "google_project_iam_member" "reconciler_runs_billing_queries" {
  project = var.project_id
  role    = "roles/bigquery.jobUser"
  member  = "serviceAccount:${google_service_account.reconciler.email}"
}

# Whoever runs `furnish billing report --sink bigquery:...` (or queries the view directly).
resource "google_bigquery_dataset_iam_member" "billing_readers" {
  for_each   = toset(var.billing_readers)
  project    = var.project_id
  dataset_id = google_bigquery_dataset.billing.dataset_id
  role       = "roles/bigquery.dataViewer"
  member     = each.value
}

resource "google_project_iam_member" "billing_readers_run_queries" {
  for_each = toset(var.billing_readers)
  project  = var.project_id
  role     = "roles/bigquery.jobUser"
  member   = each.value
}
