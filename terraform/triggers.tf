# The relay publishes one small message per change, with an ordering key per object.
resource "google_pubsub_topic" "events" {
  for_each = local.topics
  project  = var.project_id
  name     = "${var.name_prefix}-${each.key}"
}

resource "google_pubsub_topic" "dead_letter" {
  project = var.project_id
  name    = "${var.name_prefix}-dead-letter"
}

resource "google_pubsub_subscription" "push" {
  for_each                = local.subscriptions
  project                 = var.project_id
  name                    = "${var.name_prefix}-${each.key}"
  topic                   = google_pubsub_topic.events[each.value.topic].id
  enable_message_ordering = true
  # A push's request timeout is the ack deadline: shorter than the function may run, a reconcile
  # still running would be delivered again beside itself, and one namespace's reconciles overlap.
  ack_deadline_seconds = var.reconciler.timeout
  push_config {
    push_endpoint = local.function_url[each.value.function]
    oidc_token {
      service_account_email = google_service_account.push.email
      audience              = local.function_url[each.value.function]
    }
  }
  retry_policy {
    minimum_backoff = "5s"
    maximum_backoff = "300s"
  }
  # Transient failures are redelivered with backoff; a message that keeps failing is parked on the
  # dead-letter topic, never retried forever (permanent API errors are acknowledged by the function).
  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.dead_letter.id
    max_delivery_attempts = 10
  }
  depends_on = [google_cloudfunctions2_function.fn]
}

resource "google_cloud_run_service_iam_member" "push_invokes" {
  for_each = local.reconcilers
  project  = var.project_id
  location = var.region
  service  = google_cloudfunctions2_function.fn[each.key].name
  role     = "roles/run.invoker"
  member   = "serviceAccount:${google_service_account.push.email}"
}

# kube-apiserver cannot present a Google identity: the platform admits everyone and the function
# rejects any request without the cluster's signed bearer token (401, no decision).
resource "google_cloud_run_service_iam_member" "apiserver_invokes" {
  for_each = toset(local.webhooks)
  project  = var.project_id
  location = var.region
  service  = google_cloudfunctions2_function.fn[each.key].name
  role     = "roles/run.invoker"
  member   = "allUsers"
}
