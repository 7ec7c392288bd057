resource "google_cloudfunctions2_function" "fn" {
  for_each = toset(local.functions)
  project  = var.project_id
  location = var.region
  name     = "${var.name_prefix}-${each.key}"

  build_config {
    runtime     = var.runtime
    entry_point = each.key
    source {
      storage_source {
        bucket = google_storage_bucket.bundles.name
        object = google_storage_bucket_object.bundle[each.key].name
      }
    }
  }

  service_config {
    service_account_email            = contains(local.webhooks, each.key) ? google_service_account.webhook.email : google_service_account.reconciler.email
    min_instance_count               = contains(local.webhooks, each.key) ? var.webhook.min_instances : 0
    max_instance_count               = contains(local.webhooks, each.key) ? var.webhook.max_instances : var.reconciler.max_instances
    available_memory                 = contains(local.webhooks, each.key) ? var.webhook.memory : var.reconciler.memory
    timeout_seconds                  = contains(local.webhooks, each.key) ? var.webhook.timeout : var.reconciler.timeout
    max_instance_request_concurrency = contains(local.webhooks, each.key) ? 80 : var.reconciler.concurrency
    available_cpu                    = "1"
    ingress_settings                 = "ALLOW_ALL"
    environment_variables = {
      FURNISH_CONFIG    = var.furnish_config
      FURNISH_FUNCTION  = each.key
      FURNISH_TOPIC     = google_pubsub_topic.events.id
      FURNISH_BILLING   = "${var.project_id}.${var.billing.dataset}.${var.billing.table}"
      NODE_OPTIONS      = "--enable-source-maps"
    }
  }
}
