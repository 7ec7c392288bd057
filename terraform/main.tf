resource "google_cloudfunctions2_function" "fn" {
  for_each = toset(local.functions)
  project  = var.project_id
  location = var.region
  # Bare names: every part of Furnish addresses a function as <functions URL>/<name> (infra/webhooks,
  # the webhook token audiences), so one deployment per project and region.
  name = each.key

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
    service_account_email            = local.is_webhook[each.key] ? google_service_account.webhook.email : google_service_account.reconciler.email
    min_instance_count               = local.is_webhook[each.key] ? var.webhook.min_instances : 0
    max_instance_count               = local.is_webhook[each.key] ? var.webhook.max_instances : var.reconciler.max_instances
    available_memory                 = local.is_webhook[each.key] ? var.webhook.memory : var.reconciler.memory
    timeout_seconds                  = local.is_webhook[each.key] ? var.webhook.timeout : var.reconciler.timeout
    max_instance_request_concurrency = local.is_webhook[each.key] ? var.webhook.concurrency : var.reconciler.concurrency
    available_cpu                    = "1"
    ingress_settings                 = "ALLOW_ALL"
    environment_variables            = local.is_webhook[each.key] ? merge(local.webhook_env, { FURNISH_AUDIENCE = local.function_url[each.key] }) : merge(local.reconciler_env, { FURNISH_PUSH_AUDIENCE = local.function_url[each.key] })

    dynamic "secret_volumes" {
      for_each = local.is_webhook[each.key] ? [1] : []
      content {
        mount_path = "/etc/furnish"
        project_id = var.project_id
        secret     = google_secret_manager_secret.webhook_config.secret_id
        versions {
          version = "latest"
          path    = "config.yaml"
        }
      }
    }
  }

  # A function that starts before its secret has a version it may read, or before its APIs are on, fails to deploy.
  depends_on = [
    google_project_service.api,
    google_secret_manager_secret_version.webhook_config,
    google_secret_manager_secret_iam_member.webhook_reads_config,
    google_secret_manager_secret_iam_member.reconciler_reads_kubeconfig,
  ]
}

locals {
  is_webhook = { for name in local.functions : name => contains(local.webhooks, name) }
  webhook_env = {
    FURNISH_CONFIG_FILE = "/etc/furnish/config.yaml"
    NODE_ENV            = "production"
    NODE_OPTIONS        = local.webhook_node_options
  }
  # A heap of fixed shape whatever the instance: with the memory budget of the reviews in progress
  # it keeps the peak under 75 % of 256Mi (shared/webhooks/memory-budget.ts WEBHOOK_NODE_FLAGS).
  webhook_node_options = "--max-semi-space-size=2 --max-old-space-size=160"
  # Only variables the reconcilers read (shared/config/settings.ts; test/terraform/deployment.test.ts):
  # they always publish to Pub/Sub, and their topics are the relay's (local.topic_env, last: not
  # overridable, or the two would part).
  reconciler_env = merge({
    FURNISH_PUBSUB_PROJECT       = var.project_id
    FURNISH_PUSH_AUTH            = "oidc"
    FURNISH_PUSH_SERVICE_ACCOUNT = google_service_account.push.email
    FURNISH_CLUSTERS             = local.cluster_credentials
    FURNISH_BILLING              = "bigquery:${var.project_id}.${var.billing.dataset}.${var.billing.table}"
    NODE_ENV                     = "production"
    # A heap of fixed size whatever the instance (shared/functions/memory-flags.ts; README, Memory).
    NODE_OPTIONS = "--max-semi-space-size=8 --max-old-space-size=192"
  }, var.reconciler_env, local.topic_env, { FURNISH_ORGANIZATIONS = var.organizations ? "true" : "false", FURNISH_DELIVERY_TIMEOUT_SECONDS = tostring(var.reconciler.timeout) })
}
