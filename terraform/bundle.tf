# One archive per function, named by its content hash so that every code change redeploys and an
# unchanged function is left alone.
resource "google_storage_bucket" "bundles" {
  project                     = var.project_id
  name                        = "${var.project_id}-${var.name_prefix}-bundles"
  location                    = var.region
  uniform_bucket_level_access = true
  force_destroy               = true
  lifecycle_rule {
    condition { age = 30 }
    action { type = "Delete" }
  }
}

data "archive_file" "bundle" {
  for_each    = toset(local.functions)
  type        = "zip"
  source_dir  = "${var.bundle_dir}/${each.key}"
  output_path = "${path.module}/.bundles/${each.key}.zip"
}

resource "google_storage_bucket_object" "bundle" {
  for_each = data.archive_file.bundle
  bucket   = google_storage_bucket.bundles.name
  name     = "${each.key}-${each.value.output_sha256}.zip"
  source   = each.value.output_path
}
