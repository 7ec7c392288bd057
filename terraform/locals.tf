locals {
  # Admission webhooks: called by kube-apiserver, which cannot mint Google ID tokens, so the
  # platform lets every request in and the function verifies the cluster's own bearer JWT.
  webhooks = ["mutate-namespace", "validate-namespace", "validate-template", "guard-initializing", "validate-organization", "mutate-pod", "mutate-lnamespace", "protect-objects"]
  # Reconcilers: Pub/Sub push with a Google-signed OIDC token, checked by IAM and by the function.
  # Each listens on its own topic: the relay publishes namespaces and templates separately, and
  # reconcile-template fans out onto the namespaces topic.
  reconcilers = {
    "reconcile-namespace"    = "namespaces"
    "reconcile-template"     = "templates"
    # Trues up Organizations' namespace counts; a second subscription on the namespaces topic.
    "reconcile-organization" = "namespaces"
    "record-billing"         = "billing"
    "reconcile-lnamespace"   = "lnamespaces"
  }
  functions = concat(local.webhooks, keys(local.reconcilers))

  # Push subscriptions, one per reconciler on its topic, plus the pending lane: namespaces a user
  # is waiting on take their own topic and subscriptions on the same functions, so they are never
  # queued behind a resync of every namespace on the namespaces topic.
  subscriptions = merge(
    { for fn, topic in local.reconcilers : fn => { function = fn, topic = topic } },
    {
      "reconcile-namespace-pending"    = { function = "reconcile-namespace", topic = "namespaces-pending" }
      "reconcile-organization-pending" = { function = "reconcile-organization", topic = "namespaces-pending" }
    },
  )
  topics = toset([for s in values(local.subscriptions) : s.topic])

  # The cloudfunctions.net URL is known before the function exists (the run.app one is not), so
  # it can be both the push endpoint and the OIDC audience the reconciler checks, without a cycle.
  functions_url = "https://${var.region}-${var.project_id}.cloudfunctions.net"
  function_url  = { for name in local.functions : name => "${local.functions_url}/${name}" }

  # Reconcilers read each cluster's kubeconfig from Secret Manager.
  cluster_credentials = jsonencode({
    for id, s in var.cluster_secrets : id => { secret = "projects/${var.project_id}/secrets/${s.kubeconfig_secret_id}/versions/latest" }
  })
}
