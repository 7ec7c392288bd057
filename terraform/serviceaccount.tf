resource "google_service_account" "webhook" {
  project      = var.project_id
  account_id   = "${var.name_prefix}-webhook"
  display_name = "Furnish admission webhooks"
}

resource "google_service_account" "reconciler" {
  project      = var.project_id
  account_id   = "${var.name_prefix}-reconciler"
  display_name = "Furnish reconcilers"
}

# The identity Pub/Sub signs push requests as; the reconcilers accept only this e-mail.
resource "google_service_account" "push" {
  project      = var.project_id
  account_id   = "${var.name_prefix}-push"
  display_name = "Furnish Pub/Sub push"
}

# The watch relay runs in the cluster; bind this account to its Kubernetes ServiceAccount with
# Workload Identity (GKE) or workload identity federation (elsewhere).
resource "google_service_account" "relay" {
  project      = var.project_id
  account_id   = "${var.name_prefix}-relay"
  display_name = "Furnish watch relay"
}

resource "google_pubsub_topic_iam_member" "relay_publishes" {
  for_each = google_pubsub_topic.events
  project  = var.project_id
  topic    = each.value.name
  role     = "roles/pubsub.publisher"
  member   = "serviceAccount:${google_service_account.relay.email}"
}

# The reconcilers publish too: reconcile-template fans a template change out onto the namespaces
# topic, and reconcile-namespace tells the templates topic which templates' status a converged
# namespace changed (STATUS messages; without this grant templates' counts wait for a resync).
resource "google_pubsub_topic_iam_member" "reconciler_publishes" {
  for_each = toset(["namespaces", "templates"])
  project  = var.project_id
  topic    = google_pubsub_topic.events[each.key].name
  role     = "roles/pubsub.publisher"
  member   = "serviceAccount:${google_service_account.reconciler.email}"
}

# Was one grant on the namespaces topic: keep it rather than replace it.
moved {
  from = google_pubsub_topic_iam_member.reconciler_publishes
  to   = google_pubsub_topic_iam_member.reconciler_publishes["namespaces"]
}
