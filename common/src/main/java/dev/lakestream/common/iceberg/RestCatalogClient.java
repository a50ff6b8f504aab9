package dev.lakestream.common.iceberg;

import java.io.IOException;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.rest.ErrorHandler;
import org.apache.iceberg.rest.HTTPClient;
import org.apache.iceberg.rest.ParserContext;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.rest.RESTClient;
import org.apache.iceberg.rest.RESTRequest;
import org.apache.iceberg.rest.RESTResponse;
import org.apache.iceberg.rest.RESTUtil;
import org.apache.iceberg.rest.auth.AuthSession;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.rest.responses.ErrorResponseParser;

/**
 * The HTTP client of the pipeline's REST catalog ({@code type=rest}; {@link RestCatalog}): Iceberg's
 * own, with one answer read differently. A commit whose snapshot's sequence number another commit
 * took first (ingest's committer, sync and the maintenance commit to two branches of one table, and
 * every snapshot takes the table's next sequence number) is refused by REST servers built on
 * Iceberg's server code before 1.11 (apache/iceberg#15001, changed by #15126; the {@code
 * apache/iceberg-rest-fixture} images up to 1.10) as a bad request, HTTP 400, which Iceberg's
 * client does not retry. The server refused it before writing anything, exactly as it refuses a
 * commit whose branch moved (HTTP 409), so it is reported as that: a {@link CommitFailedException},
 * which Iceberg's commit retries on the table as it is now. Only table commits are read so; newer
 * servers answer 409 themselves, and nothing else changes.
 */
final class RestCatalogClient implements RESTClient {

  /** The message of Iceberg's {@code TableMetadata.Builder} that such a server returns. */
  static final String SEQUENCE_TAKEN = "Cannot add snapshot with sequence number";

  private final RESTClient delegate;

  RestCatalogClient(RESTClient delegate) {
    this.delegate = delegate;
  }

  /** Iceberg's HTTP client for {@code config}, built as {@link RESTCatalog}'s default builds it. */
  static RESTClient forConfig(Map<String, String> config) {
    return new RestCatalogClient(HTTPClient.builder(config)
        .uri(config.get(CatalogProperties.URI))
        .withHeaders(RESTUtil.configHeaders(config))
        .build());
  }

  /** {@code handler}, or for a table commit {@link #conflictsRetried}: nothing else is read anew. */
  private static Consumer<ErrorResponse> forRequest(
      RESTRequest body, Consumer<ErrorResponse> handler) {
    return body instanceof UpdateTableRequest ? conflictsRetried(handler) : handler;
  }

  /**
   * {@code handler}, but a refused sequence number is a commit conflict. An {@link ErrorHandler}
   * (the client parses the response body with it), parsing as {@code handler} does.
   */
  static Consumer<ErrorResponse> conflictsRetried(Consumer<ErrorResponse> handler) {
    return new ErrorHandler() {
      @Override
      public ErrorResponse parseResponse(int code, String json) {
        return handler instanceof ErrorHandler parser
            ? parser.parseResponse(code, json)
            : ErrorResponseParser.fromJson(json);
      }

      @Override
      public void accept(ErrorResponse error) {
        if (error.code() != null
            && error.code() == 400
            && error.message() != null
            && error.message().contains(SEQUENCE_TAKEN)) {
          throw new CommitFailedException(
              "Commit refused, another commit took its sequence number first (HTTP 400 from a REST"
                  + " server that does not report it as a conflict): %s",
              error.message());
        }
        handler.accept(error);
      }
    };
  }

  @Override
  public RESTClient withAuthSession(AuthSession session) {
    return new RestCatalogClient(delegate.withAuthSession(session));
  }

  @Override
  public <T extends RESTResponse> T post(
      String path,
      RESTRequest body,
      Class<T> responseType,
      Map<String, String> headers,
      Consumer<ErrorResponse> errorHandler) {
    return delegate.post(path, body, responseType, headers, forRequest(body, errorHandler));
  }

  @Override
  public <T extends RESTResponse> T post(
      String path,
      RESTRequest body,
      Class<T> responseType,
      Supplier<Map<String, String>> headers,
      Consumer<ErrorResponse> errorHandler) {
    return delegate.post(path, body, responseType, headers, forRequest(body, errorHandler));
  }

  @Override
  public <T extends RESTResponse> T post(
      String path,
      RESTRequest body,
      Class<T> responseType,
      Supplier<Map<String, String>> headers,
      Consumer<ErrorResponse> errorHandler,
      Consumer<Map<String, String>> responseHeaders) {
    return delegate.post(
        path, body, responseType, headers, forRequest(body, errorHandler), responseHeaders);
  }

  @Override
  public <T extends RESTResponse> T post(
      String path,
      RESTRequest body,
      Class<T> responseType,
      Map<String, String> headers,
      Consumer<ErrorResponse> errorHandler,
      Consumer<Map<String, String>> responseHeaders) {
    return delegate.post(
        path, body, responseType, headers, forRequest(body, errorHandler), responseHeaders);
  }

  @Override
  public <T extends RESTResponse> T post(
      String path,
      RESTRequest body,
      Class<T> responseType,
      Map<String, String> headers,
      Consumer<ErrorResponse> errorHandler,
      Consumer<Map<String, String>> responseHeaders,
      ParserContext parserContext) {
    return delegate.post(
        path,
        body,
        responseType,
        headers,
        forRequest(body, errorHandler),
        responseHeaders,
        parserContext);
  }

  @Override
  public void head(
      String path, Supplier<Map<String, String>> headers, Consumer<ErrorResponse> errorHandler) {
    delegate.head(path, headers, errorHandler);
  }

  @Override
  public void head(String path, Map<String, String> headers, Consumer<ErrorResponse> errorHandler) {
    delegate.head(path, headers, errorHandler);
  }

  @Override
  public <T extends RESTResponse> T delete(
      String path,
      Map<String, String> queryParams,
      Class<T> responseType,
      Supplier<Map<String, String>> headers,
      Consumer<ErrorResponse> errorHandler) {
    return delegate.delete(path, queryParams, responseType, headers, errorHandler);
  }

  @Override
  public <T extends RESTResponse> T delete(
      String path,
      Class<T> responseType,
      Supplier<Map<String, String>> headers,
      Consumer<ErrorResponse> errorHandler) {
    return delegate.delete(path, responseType, headers, errorHandler);
  }

  @Override
  public <T extends RESTResponse> T delete(
      String path,
      Class<T> responseType,
      Map<String, String> headers,
      Consumer<ErrorResponse> errorHandler) {
    return delegate.delete(path, responseType, headers, errorHandler);
  }

  @Override
  public <T extends RESTResponse> T delete(
      String path,
      Map<String, String> queryParams,
      Class<T> responseType,
      Map<String, String> headers,
      Consumer<ErrorResponse> errorHandler) {
    return delegate.delete(path, queryParams, responseType, headers, errorHandler);
  }

  @Override
  public <T extends RESTResponse> T get(
      String path,
      Class<T> responseType,
      Supplier<Map<String, String>> headers,
      Consumer<ErrorResponse> errorHandler) {
    return delegate.get(path, responseType, headers, errorHandler);
  }

  @Override
  public <T extends RESTResponse> T get(
      String path,
      Class<T> responseType,
      Map<String, String> headers,
      Consumer<ErrorResponse> errorHandler) {
    return delegate.get(path, responseType, headers, errorHandler);
  }

  @Override
  public <T extends RESTResponse> T get(
      String path,
      Map<String, String> queryParams,
      Class<T> responseType,
      Supplier<Map<String, String>> headers,
      Consumer<ErrorResponse> errorHandler) {
    return delegate.get(path, queryParams, responseType, headers, errorHandler);
  }

  @Override
  public <T extends RESTResponse> T get(
      String path,
      Map<String, String> queryParams,
      Class<T> responseType,
      Map<String, String> headers,
      Consumer<ErrorResponse> errorHandler,
      ParserContext parserContext) {
    return delegate.get(path, queryParams, responseType, headers, errorHandler, parserContext);
  }

  @Override
  public <T extends RESTResponse> T get(
      String path,
      Map<String, String> queryParams,
      Class<T> responseType,
      Supplier<Map<String, String>> headers,
      Consumer<ErrorResponse> errorHandler,
      Consumer<Map<String, String>> responseHeaders) {
    return delegate.get(path, queryParams, responseType, headers, errorHandler, responseHeaders);
  }

  @Override
  public <T extends RESTResponse> T get(
      String path,
      Map<String, String> queryParams,
      Class<T> responseType,
      Map<String, String> headers,
      Consumer<ErrorResponse> errorHandler,
      Consumer<Map<String, String>> responseHeaders) {
    return delegate.get(path, queryParams, responseType, headers, errorHandler, responseHeaders);
  }

  @Override
  public <T extends RESTResponse> T get(
      String path,
      Map<String, String> queryParams,
      Class<T> responseType,
      Map<String, String> headers,
      Consumer<ErrorResponse> errorHandler) {
    return delegate.get(path, queryParams, responseType, headers, errorHandler);
  }

  @Override
  public <T extends RESTResponse> T postForm(
      String path,
      Map<String, String> formData,
      Class<T> responseType,
      Supplier<Map<String, String>> headers,
      Consumer<ErrorResponse> errorHandler) {
    return delegate.postForm(path, formData, responseType, headers, errorHandler);
  }

  @Override
  public <T extends RESTResponse> T postForm(
      String path,
      Map<String, String> formData,
      Class<T> responseType,
      Map<String, String> headers,
      Consumer<ErrorResponse> errorHandler) {
    return delegate.postForm(path, formData, responseType, headers, errorHandler);
  }

  @Override
  public void close() throws IOException {
    delegate.close();
  }
}
