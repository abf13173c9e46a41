//! Tier B (shorter prefixes, light context) and tier C (generic and contextual) rules; see
//! `table.rs` for the row format.

use crate::custom;
use crate::email;
use crate::filters;
use crate::generic::{self, Class, Site};
use crate::named;
use crate::table::Tier::{B, C};
use crate::table::{Def, Guard, PW, TOK, TOKD, cu, nr, rx};

fn gen_password(site: &mut Site<'_>, o: &mut Vec<(usize, usize)>) {
    generic::assignment(Class::Password, site, o);
}
fn gen_secret(site: &mut Site<'_>, o: &mut Vec<(usize, usize)>) {
    generic::assignment(Class::Secret, site, o);
}
fn gen_token(site: &mut Site<'_>, o: &mut Vec<(usize, usize)>) {
    generic::assignment(Class::Token, site, o);
}
fn gen_api_key(site: &mut Site<'_>, o: &mut Vec<(usize, usize)>) {
    generic::assignment(Class::ApiKey, site, o);
}

/// `"input_tokens":`, `"cache_read_input_tokens":`… (four in five `oken` hits of a real
/// transcript): a plural name that is a JSON key never names a credential, so the name-based
/// rules skip it before looking at the identifier.
fn not_plural(hay: &[u8], _s: usize, e: usize) -> bool {
    !(matches!(hay.get(e), Some(b's' | b'S')) && matches!(hay.get(e + 1), Some(b'"' | b'\\')))
}

/// `.acc` of an Authress key is followed by `_` or `-` (`.accept`, `.access` are not).
fn authress_anchor(hay: &[u8], _s: usize, e: usize) -> bool {
    matches!(hay.get(e), Some(b'_' | b'-'))
}

/// `Password" value=` of a NuGet `<add key=…>` element: capital `P`.
fn nuget_anchor(hay: &[u8], s: usize, _e: usize) -> bool {
    s >= 1 && hay[s - 1] == b'P'
}

#[rustfmt::skip]
pub(crate) static TIER_B: &[Def] = &[
    rx("xai-api-key", B, &["^xai-"], r"%L%(?P<s>xai-[A-Za-z0-9]{70,})%R%", 16, 120, TOKD, "xAI API key"),
    rx("perplexity-api-key", B, &["^pplx-"], r"%L%(?P<s>pplx-[A-Za-z0-9]{40,})%R%", 16, 80, TOKD, "Perplexity API key"),
    rx("replicate-api-token", B, &["^r8_"], r"%L%(?P<s>r8_[A-Za-z0-9]{37})%R%", 16, 50, TOKD, "Replicate API token"),
    rx("huggingface-token", B, &["^hf_", "^api_org_"], r"%L%(?P<s>hf_[A-Za-z]{34}|api_org_[A-Za-z]{34})%R%", 16, 50, Some(filters::letters_token), "Hugging Face access token"),
    rx("aws-access-key-id", B, &["^AKI", "^ASI", "^ABI", "^ACCA", "^A3T"], r"%LB%(?P<s>(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16})%RB%", 16, 30, Some(filters::aws), "AWS access key id"),
    cu("aws-secret-access-key", B, &["ecret", "ECRET"], named::aws_secret, "AWS secret access key next to its name"),
    cu("aws-session-token", B, &["oken", "OKEN"], named::aws_session, "AWS session token next to its name").g(Guard::Fn(not_plural)),
    rx("gitlab-token", B, &["^glp", "^gld", "^glr", "^glc", "^glf", "^gli", "^gla", "^glo", "^gls", "^GR1348941"], r"%L%(?P<s>gl(?:pat|dt|rt|ptt|cbt|ft|ffct|imt|agent|oas|soat)-[A-Za-z0-9_.-]{20,}|GR1348941[A-Za-z0-9_-]{20,})%RD%", 16, 200, TOK, "GitLab personal, deploy, runner, trigger, CI job, feed, mail, agent, OAuth-app, SCIM and runner-registration tokens"),
    rx("vault-token", B, &["^hvs.", "^hvb."], r"%L%(?P<s>hv[sb]\.[A-Za-z0-9_-]{24,})%RD%", 16, 256, TOKD, "HashiCorp Vault service/batch token"),
    rx("terraform-cloud-token", B, &[".atlasv1."], r"%L%(?P<s>[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,})%RD%", 32, 200, TOK, "Terraform Cloud / Enterprise API token"),
    rx("azure-storage-key", B, &["Key"], r"(?:AccountKey|SharedAccessKey)=(?P<s>[A-Za-z0-9+/]{40,}={0,2})", 16, 200, TOK, "Azure storage account / Service Bus key in a connection string").g(Guard::After("=")),
    rx("azure-sas-signature", B, &["sig="], r"[?&;]sig=(?P<s>[A-Za-z0-9%+/]{30,}(?:=|%3[dD]){0,2})", 2, 200, TOK, "Azure SAS token signature"),
    rx("azure-ad-client-secret", B, &["Q~"], r"(?:^|[^A-Za-z0-9_~.-]|\\[nrt])(?P<s>[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})(?:$|[^A-Za-z0-9_~.-])", 8, 40, TOKD, "Entra ID (Azure AD) client secret"),
    cu("database-url-password", B, &["://"], custom::db_url_password, "Password in a database/broker URL (postgres, mysql, mongodb, redis, amqp…)"),
    cu("url-password", B, &["://"], custom::url_password, "Password in any other URL (user:pass@host)"),
    rx("http-auth-header", B, &["uthoriz"], r#"(?i:authorization)\\*["']?[ \t]*[:=][ \t]*\\*["']?[ \t]*(?:(?i:bearer|basic|token|bot|digest|apikey|api-key|api-token)[ \t]+)?(?P<s>[A-Za-z0-9._~+/=-]{8,})(?:$|[^A-Za-z0-9._~+/=(-])"#, 8, 256, Some(filters::header_value), "Authorization header value").g(Guard::Before("a")),
    rx("bearer-token", B, &["earer "], r"(?:^|[^A-Za-z0-9_])(?i:bearer)[ \t]+(?P<s>[A-Za-z0-9._~+/-]{16,}=*)(?:$|[^A-Za-z0-9._~+/=(-])", 8, 256, Some(filters::header_value), "Bearer token").g(Guard::Before("b")),
    rx("cli-basic-auth", B, &[" -u ", "--user"], r#"(?:-u|--user)(?:[ \t]+|=)\\*["']?[^\s:"'\\]{0,100}\\*["']?:\\*["']?(?P<s>[^\s"'\\]{3,200})"#, 2, 256, PW, "`curl -u` / `--user user:password`"),
    rx("telegram-bot-token", B, &[":AA"], r"(?:%L%|/bot)(?P<s>[0-9]{8,10}:AA[A-Za-z0-9_-]{33})%RD%", 28, 40, TOK, "Telegram bot token"),
    rx("sendgrid-api-key", B, &["^SG."], r"%L%(?P<s>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})%RD%", 16, 80, TOK, "SendGrid API key"),
    nr("mailgun-api-key", B, &["ailgun", "AILGUN"], r"(?:^|[^A-Za-z0-9])(?P<s>key-[a-f0-9]{32})%R%", 12, TOK, Guard::Before("m"), "Mailgun API keys after the word mailgun"),
    cu("mailchimp-api-key", B, &["_key", "_KEY", "Key"], named::mailchimp, "Mailchimp API key (`<32 hex>-usN`) assigned to a mailchimp name"),
    cu("resend-api-key", B, &["_key", "_KEY", "Key"], named::resend, "Resend API key assigned to a resend name"),
    rx("databricks-token", B, &["^dapi"], r"%L%(?P<s>dapi[a-f0-9]{32}(?:-[0-9])?)%R%", 16, 40, TOK, "Databricks personal access token"),
    cu("cloudflare-api-key", B, &["oken", "OKEN", "_key", "_KEY", "Key"], named::cloudflare, "Cloudflare API token / global key assigned to a cloudflare/CF name").g(Guard::Fn(not_plural)),
    // Added for gitleaks coverage (docs/redact.md, "Coverage").
    rx("alibaba-access-key-id", B, &["^LTAI"], r"%L%(?P<s>LTAI[A-Za-z0-9]{12,20})%R%", 16, 30, TOKD, "Alibaba Cloud AccessKey ID"),
    rx("clickhouse-api-secret", B, &["^4b1d"], r"%L%(?P<s>4b1d[A-Za-z0-9]{38})%R%", 16, 50, TOKD, "ClickHouse Cloud API secret"),
    rx("adobe-client-secret", B, &["^p8e-"], r"%L%(?P<s>p8e-[A-Za-z0-9]{32})%RD%", 16, 40, TOKD, "Adobe OAuth client secret"),
    rx("infracost-token", B, &["^ico-"], r"%L%(?P<s>ico-[A-Za-z0-9]{32})%RD%", 16, 40, Some(filters::mixed_case_token), "Infracost API token"),
    rx("octopus-deploy-api-key", B, &["^API-"], r"%L%(?P<s>API-[A-Z0-9]{26})%RD%", 16, 32, TOKD, "Octopus Deploy API key"),
    rx("openshift-user-token", B, &["6~"], r"%L%(?P<s>sha256~[A-Za-z0-9_-]{43})%RD%", 8, 50, TOK, "OpenShift user token"),
    rx("settlemint-token", B, &["^sm_a", "^sm_p", "^sm_s"], r"%L%(?P<s>sm_(?:aat|pat|sat)_[A-Za-z0-9]{16,})%R%", 16, 40, TOKD, "SettleMint application, personal and service tokens"),
    rx("authress-access-key", B, &[".acc"], r"%L%(?P<s>(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120})%RB%", 56, 180, TOK, "Authress service client access key").g(Guard::Fn(authress_anchor)),
    rx("gitlab-session-cookie", B, &["_gitlab_session"], r"_gitlab_session=(?P<s>[0-9a-z]{32})%R%", 2, 50, TOK, "GitLab session cookie"),
    rx("sidekiq-secret", B, &["ontribsys", "ONTRIBSYS"], r"(?i:contribsys)(?:__COM|\.com)\\*['\x22]?[ \t]*[=: \t][ \t]*\\*['\x22]?(?P<s>[a-f0-9]{8}:[a-f0-9]{8})%R%", 4, 60, None, "Sidekiq Enterprise / Pro gem-server credentials"),
];

#[rustfmt::skip]
pub(crate) static TIER_C: &[Def] = &[
    cu("netrc-password", C, &["assw"], custom::netrc, "`.netrc` machine / login / password"),
    rx("xml-password", C, &["assw", "ASSW"], r"<(?i:password|passwd)>(?P<s>[^<\s]{3,})</", 12, 256, PW, "`<password>` elements (Maven settings.xml and friends)").g(Guard::Before("<p")),
    cu("docker-config-auth", C, &["\"auth"], named::docker_auth, "`auth` (base64 user:password) entries of a Docker `config.json` `auths` map"),
    cu("kubernetes-secret", C, &["ecret"], custom::k8s_secret, "`data` / `stringData` values of a `kind: Secret` manifest"),
    rx("kubeconfig-client-key", C, &["key-"], r"client-key-data:[ \t]*\\*\x22?(?P<s>[A-Za-z0-9+/=]{20,})", 16, 256, TOK, "`client-key-data` in a kubeconfig").g(Guard::Before("client-")),
    nr("discord-bot-token", C, &["iscord"], r"(?:^|[^A-Za-z0-9_.-])(?P<s>[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40})%RD%", 12, TOK, Guard::Before("d"), "Discord bot tokens after the word discord"),
    nr("facebook-app-token", C, &["acebook"], r"(?:^|[^0-9])(?P<s>[0-9]{15,16}(?:\||%7[Cc])[A-Za-z0-9_-]{27,40})%RD%", 12, TOK, Guard::Before("f"), "Facebook app access token (`<app id>|<app secret>`) after the word facebook"),
    nr("twilio-api-key", C, &["wilio"], r"(?:^|[^A-Za-z0-9])(?P<s>SK[0-9a-fA-F]{32})%R%", 12, TOK, Guard::Before("t"), "Twilio API key SIDs after the word twilio"),
    cu("generic-password", C, &["assw", "ASSW"], gen_password, "NAME=value where NAME contains password/passwd"),
    cu("generic-secret", C, &["ecret", "ECRET", "redentia"], gen_secret, "NAME=value where NAME contains secret/credential"),
    cu("generic-token", C, &["oken", "OKEN"], gen_token, "NAME=value where NAME contains token").g(Guard::Fn(not_plural)),
    cu("generic-api-key", C, &["_key", "_KEY", "Key", "-key", "apikey", "IKEY", "SKEY", "skey"], gen_api_key, "NAME=value where NAME is an api/access/private/secret/app key, or a provider's key"),
    rx("nuget-config-password", C, &["assw"], r#"<add[ \t]+key=\\*"(?:ClearText)?Password\\*"[ \t]+value=\\*"(?P<s>[^"\\]{3,})\\*""#, 40, 256, PW, "`ClearTextPassword` in a NuGet.config").g(Guard::Fn(nuget_anchor)),
    cu("email", C, &["@"], email::email, "E-mail address (placeholder and `noreply` addresses excepted)"),
];
