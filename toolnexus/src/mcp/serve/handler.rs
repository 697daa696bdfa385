//! [`McpService`] as an rmcp `ServerHandler`: `tools/call` to [`McpService::call`], the tasks
//! methods to `tasks.rs`, everything else to the handler the service wraps (or refused).

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, GetTaskParams, GetTaskResult,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};

use crate::result::ToolResult;

use super::notices::Forwarder;
use super::{McpService, no_handler, tool_result};

impl ServerHandler for McpService {
    #[allow(deprecated)] // MCP logging: deprecated by SEP-2577 in rmcp, still in 2025-11-25
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = if self.inner.store.is_some() {
            ServerCapabilities::builder()
                .enable_logging()
                .enable_tools()
                .enable_tasks()
                .build()
        } else {
            ServerCapabilities::builder()
                .enable_logging()
                .enable_tools()
                .build()
        };
        if let Some(others) = &self.inner.others {
            let theirs = others.capabilities();
            capabilities.resources = theirs.resources;
            capabilities.prompts = theirs.prompts;
            capabilities.completions = theirs.completions;
        }
        let mut info = ServerConfig::new(capabilities).with_server_info(self.inner.info.clone());
        if let Some(instructions) = &self.inner.instructions {
            info = info.with_instructions(instructions.clone());
        }
        info
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        match &self.inner.others {
            Some(o) => o.list_resources(request, context).await,
            None => Ok(rmcp::model::ListResourcesResult::default()),
        }
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, ErrorData> {
        match &self.inner.others {
            Some(o) => o.list_resource_templates(request, context).await,
            None => Ok(rmcp::model::ListResourceTemplatesResult::default()),
        }
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        match &self.inner.others {
            Some(o) => o.read_resource(request, context).await,
            None => Err(no_handler("resources/read")),
        }
    }

    #[allow(deprecated)] // legacy resources/subscribe, still in 2025-11-25
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        match &self.inner.others {
            Some(o) => o.subscribe(request, context).await,
            None => Err(no_handler("resources/subscribe")),
        }
    }

    #[allow(deprecated)] // legacy resources/unsubscribe, still in 2025-11-25
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        match &self.inner.others {
            Some(o) => o.unsubscribe(request, context).await,
            None => Err(no_handler("resources/unsubscribe")),
        }
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, ErrorData> {
        match &self.inner.others {
            Some(o) => o.list_prompts(request, context).await,
            None => Ok(rmcp::model::ListPromptsResult::default()),
        }
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, ErrorData> {
        match &self.inner.others {
            Some(o) => o.get_prompt(request, context).await,
            None => Err(no_handler("prompts/get")),
        }
    }

    async fn complete(
        &self,
        request: rmcp::model::CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, ErrorData> {
        match &self.inner.others {
            Some(o) => o.complete(request, context).await,
            None => Err(no_handler("completion/complete")),
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.get_parked_task(request, &context).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.update_parked_task(request, &context).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.cancel_parked_task(request, &context).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let (forwarder, notify) = Forwarder::start(&context, self.level.clone(), name.clone());
        let response = tokio::select! {
            biased;
            () = self.closed.cancelled() => tool_result(&ToolResult::error(format!(
                "cancelled: {name} (the MCP client closed the connection)"
            ))).into(),
            response = self.call(request, &context, &notify) => response,
        };
        // what the tool said goes out before its result
        forwarder.finish().await;
        Ok(response)
    }

    #[allow(deprecated)] // MCP logging: deprecated by SEP-2577 in rmcp, still in 2025-11-25
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.level.set(request.level);
        Ok(())
    }
}
