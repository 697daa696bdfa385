//! The rest of a server next to a toolkit: a host's rmcp [`ServerHandler`] answers
//! resources, prompts and completion ([`McpService::with_handler`]), while the toolkit keeps
//! `tools/list` and `tools/call` (and what the service does for them: elicitations, durable
//! calls, tasks, logging and progress).

use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};

use crate::tool::BoxFuture;

type Answer<'a, T> = BoxFuture<'a, Result<T, ErrorData>>;

/// The methods of a host's handler the service hands on, object-safe.
pub(super) trait Others: Send + Sync {
    fn capabilities(&self) -> ServerCapabilities;
    fn list_resources(
        &self,
        p: Option<PaginatedRequestParams>,
        c: RequestContext<RoleServer>,
    ) -> Answer<'_, ListResourcesResult>;
    fn list_resource_templates(
        &self,
        p: Option<PaginatedRequestParams>,
        c: RequestContext<RoleServer>,
    ) -> Answer<'_, ListResourceTemplatesResult>;
    fn read_resource(
        &self,
        p: ReadResourceRequestParams,
        c: RequestContext<RoleServer>,
    ) -> Answer<'_, ReadResourceResponse>;
    fn subscribe(&self, p: SubscribeRequestParams, c: RequestContext<RoleServer>)
    -> Answer<'_, ()>;
    #[allow(deprecated)] // legacy resources/unsubscribe, still in 2025-11-25
    fn unsubscribe(
        &self,
        p: UnsubscribeRequestParams,
        c: RequestContext<RoleServer>,
    ) -> Answer<'_, ()>;
    fn list_prompts(
        &self,
        p: Option<PaginatedRequestParams>,
        c: RequestContext<RoleServer>,
    ) -> Answer<'_, ListPromptsResult>;
    fn get_prompt(
        &self,
        p: GetPromptRequestParams,
        c: RequestContext<RoleServer>,
    ) -> Answer<'_, GetPromptResponse>;
    fn complete(
        &self,
        p: CompleteRequestParams,
        c: RequestContext<RoleServer>,
    ) -> Answer<'_, CompleteResult>;
}

impl<H: ServerHandler> Others for H {
    fn capabilities(&self) -> ServerCapabilities {
        self.get_info().capabilities
    }
    fn list_resources(
        &self,
        p: Option<PaginatedRequestParams>,
        c: RequestContext<RoleServer>,
    ) -> Answer<'_, ListResourcesResult> {
        Box::pin(ServerHandler::list_resources(self, p, c))
    }
    fn list_resource_templates(
        &self,
        p: Option<PaginatedRequestParams>,
        c: RequestContext<RoleServer>,
    ) -> Answer<'_, ListResourceTemplatesResult> {
        Box::pin(ServerHandler::list_resource_templates(self, p, c))
    }
    fn read_resource(
        &self,
        p: ReadResourceRequestParams,
        c: RequestContext<RoleServer>,
    ) -> Answer<'_, ReadResourceResponse> {
        Box::pin(ServerHandler::read_resource(self, p, c))
    }
    #[allow(deprecated)] // legacy resources/subscribe, still in 2025-11-25
    fn subscribe(
        &self,
        p: SubscribeRequestParams,
        c: RequestContext<RoleServer>,
    ) -> Answer<'_, ()> {
        Box::pin(ServerHandler::subscribe(self, p, c))
    }
    #[allow(deprecated)] // legacy resources/unsubscribe, still in 2025-11-25
    fn unsubscribe(
        &self,
        p: UnsubscribeRequestParams,
        c: RequestContext<RoleServer>,
    ) -> Answer<'_, ()> {
        Box::pin(ServerHandler::unsubscribe(self, p, c))
    }
    fn list_prompts(
        &self,
        p: Option<PaginatedRequestParams>,
        c: RequestContext<RoleServer>,
    ) -> Answer<'_, ListPromptsResult> {
        Box::pin(ServerHandler::list_prompts(self, p, c))
    }
    fn get_prompt(
        &self,
        p: GetPromptRequestParams,
        c: RequestContext<RoleServer>,
    ) -> Answer<'_, GetPromptResponse> {
        Box::pin(ServerHandler::get_prompt(self, p, c))
    }
    fn complete(
        &self,
        p: CompleteRequestParams,
        c: RequestContext<RoleServer>,
    ) -> Answer<'_, CompleteResult> {
        Box::pin(ServerHandler::complete(self, p, c))
    }
}
