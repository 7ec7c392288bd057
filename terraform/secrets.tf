# Per-cluster secrets: the key that verifies the cluster's webhook tokens (read by the webhooks)
# and the kubeconfig the reconcilers use to write into that cluster (read by the reconcilers).
resource "google_secret_manager_secret" "webhook_key" {
  for_each  = var.cluster_secrets
  project   = var.project_id
  secret_id = each.value.webhook_key
  replication {
    auto {}
  }
}

resource "google_secret_manager_secret" "kubeconfig" {
  for_each  = var.cluster_secrets
  project   = var.project_id
  secret_id = each.value.kubeconfig
  replication {
    auto {}
  }
}

resource "google_secret_manager_secret_iam_member" "webhook_reads_key" {
  for_each  = google_secret_manager_secret.webhook_key
  project   = var.project_id
  secret_id = each.value.secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = "serviceAccount:${google_service_account.webhook.email}"
}

resource "google_secret_manager_secret_iam_member" "reconciler_reads_kubeconfig" {
  for_each  = google_secret_manager_secret.kubeconfig
  project   = var.project_id
  secret_id = each.value.secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = "serviceAccount:${google_service_account.reconciler.email}"
}
