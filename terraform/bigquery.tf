resource "google_bigquery_dataset" "billing" {
  project    = var.project_id
  dataset_id = var.billing.dataset
  location   = var.billing.location
}

# One row per namespace lifecycle event; insert ids are deterministic so retries never duplicate.
resource "google_bigquery_table" "billing" {
  project             = var.project_id
  dataset_id          = google_bigquery_dataset.billing.dataset_id
  table_id            = var.billing.table
  deletion_protection = true
  time_partitioning {
    type  = "DAY"
    field = "event_time"
  }
  clustering = ["cluster", "organization"]
  schema = jsonencode([
    { name = "insert_id", type = "STRING", mode = "REQUIRED" },
    { name = "event", type = "STRING", mode = "REQUIRED", description = "created | changed | deleted" },
    { name = "event_time", type = "TIMESTAMP", mode = "REQUIRED" },
    { name = "cluster", type = "STRING", mode = "REQUIRED" },
    { name = "namespace", type = "STRING", mode = "REQUIRED" },
    { name = "organization", type = "STRING", mode = "NULLABLE" },
    { name = "creator", type = "STRING", mode = "NULLABLE" },
    { name = "billing", type = "JSON", mode = "NULLABLE", description = "billing metadata of the Organization or LNamespace" },
  ])
}
