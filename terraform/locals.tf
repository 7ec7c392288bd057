locals {
  # Admission webhooks: called by kube-apiserver, which cannot mint Google ID tokens, so the
  # platform lets every request in and the function verifies the cluster's own bearer JWT.
  webhooks = ["mutate-namespace", "validate-namespace", "validate-template", "guard-initializing", "validate-organization", "mutate-pod", "mutate-lnamespace", "protect-objects"]
  # Reconcilers: Pub/Sub push with a Google-signed OIDC token, checked by IAM and by the function.
  # Each listens on its own topic: the relay publishes namespaces and templates separately, and
  # reconcile-template fans out onto the namespaces topic.
  reconcilers = {
    "reconcile-namespace" = "namespaces"
    "reconcile-template"  = "templates"
    # Trues up Organizations' namespace counts; a second subscription on the namespaces topic.
    "reconcile-organization" = "namespaces"
    "record-billing"         = "billing"
    "reconcile-lnamespace"   = "lnamespaces"
  }
  functions = concat(local.webhooks, keys(local.reconcilers))

  # Push subscriptions, one per reconciler on its topic. Every message about a namespace takes the
  # one namespaces topic: its ordering key (cluster/Namespace/<name>) serializes the namespace's
  # reconciles, which a second topic would not.
  subscriptions = { for fn, topic in local.reconcilers : fn => { function = fn, topic = topic } }
  topics        = toset([for s in values(local.subscriptions) : s.topic])

  # The topic names as the relay and the reconcilers read them (shared/config/settings.ts): one map
  # for the reconcilers' environment and for the relay's manifest (output install_vars), so that
  # the relay publishes to exactly the topics created here, whatever var.name_prefix is. Only the
  # relay publishes billing events.
  topic_env = {
    FURNISH_TOPIC_NAMESPACES  = google_pubsub_topic.events["namespaces"].name
    FURNISH_TOPIC_TEMPLATES   = google_pubsub_topic.events["templates"].name
    FURNISH_TOPIC_LNAMESPACES = google_pubsub_topic.events["lnamespaces"].name
  }

  # The relay's Kubernetes ServiceAccount (infra/relay: kustomization namespace, serviceAccountName),
  # which Workload Identity lets act as Google service account `relay`.
  relay_kubernetes_service_account = "furnish-system/furnish-relay"

  # The values of the template variables of infra/ that this deployment decides, per cluster:
  # `furnish install --vars` (or envsubst) fills the manifests with them (README, Deploy). Cloud
  # Functions serve a publicly trusted certificate: no CA bundle, kube-apiserver uses its roots.
  # On GKE also the users the functions authenticate as (their Google service accounts), which
  # `furnish install` binds beside the ServiceAccounts (shared/install/manifests.ts IDENTITY_VARS).
  install_vars = { for id in local.cluster_ids : id => merge(local.topic_env, {
    FURNISH_TOPIC_BILLING         = google_pubsub_topic.events["billing"].name
    FURNISH_CLUSTER_ID            = id
    FURNISH_PROJECT               = var.project_id
    FURNISH_RELAY_SERVICE_ACCOUNT = google_service_account.relay.email
    FURNISH_FUNCTIONS_URL         = local.functions_url
    FURNISH_CA_BUNDLE             = ""
    # The cluster's path credential (secrets.tf): `furnish install` puts it in the webhooks' URLs,
    # so nobody copies it by hand; it makes the output sensitive.
    FURNISH_PATH_CREDENTIAL = random_password.path_credential[id].result
    # The settings the webhooks decide with (secrets.tf), for the in-tree policies `furnish install` renders.
    FURNISH_POLICY_SETTINGS = jsonencode(local.policy_settings[id])
    }, { for k, v in {
      FURNISH_RECONCILER_USER = contains(keys(var.gke_clusters), id) ? google_service_account.reconciler.email : null
      FURNISH_WEBHOOK_USER    = contains(keys(var.gke_clusters), id) ? google_service_account.webhook.email : null
  } : k => v if v != null }) }

  # The cloudfunctions.net URL is known before the function exists (the run.app one is not), so
  # it can be both the push endpoint and the OIDC audience the reconciler checks, without a cycle.
  functions_url = "https://${var.region}-${var.project_id}.cloudfunctions.net"
  function_url  = { for name in local.functions : name => "${local.functions_url}/${name}" }

  # Reconcilers reach a GKE cluster with their Google identity (gke.tf), any other with the
  # kubeconfig in its Secret Manager secret (shared/config/settings.ts FURNISH_CLUSTERS).
  cluster_credentials = jsonencode(merge(
    { for id, s in var.cluster_secrets : id => { secret = "projects/${var.project_id}/secrets/${s.kubeconfig_secret_id}/versions/latest" } },
    { for id, api in local.gke_api : id => { google = api } },
  ))
}
