package demo;

import com.google.protobuf.Empty;
import com.google.protobuf.StringValue;
import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import java.util.concurrent.TimeUnit;

/**
 * Calls the interop backends' one RPC, /test.Who/Name, through grpc-java's
 * own xDS resolver (its bootstrap in GRPC_XDS_BOOTSTRAP_CONFIG) and prints
 * the name of the backend that answered each call, one a line ("error: ..."
 * for a failed call).
 *
 * <p>Arguments: the target (xds:///orders), the number of calls, and
 * optionally a header name and value every call carries.
 */
public final class XdsClientApp {
  private static final MethodDescriptor<Empty, StringValue> WHO =
      MethodDescriptor.<Empty, StringValue>newBuilder()
          .setType(MethodDescriptor.MethodType.UNARY)
          .setFullMethodName("test.Who/Name")
          .setRequestMarshaller(ProtoUtils.marshaller(Empty.getDefaultInstance()))
          .setResponseMarshaller(ProtoUtils.marshaller(StringValue.getDefaultInstance()))
          .build();

  public static void main(String[] args) throws Exception {
    String target = args[0];
    int calls = Integer.parseInt(args[1]);
    ManagedChannel channel = Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).build();
    io.grpc.Channel ch = channel;
    if (args.length == 4) {
      Metadata md = new Metadata();
      md.put(Metadata.Key.of(args[2], Metadata.ASCII_STRING_MARSHALLER), args[3]);
      ch = io.grpc.ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(md));
    }
    try {
      for (int i = 0; i < calls; i++) {
        try {
          StringValue name = ClientCalls.blockingUnaryCall(ch, WHO,
              CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), Empty.getDefaultInstance());
          System.out.println(name.getValue());
        } catch (RuntimeException e) {
          System.out.println("error: " + e.getMessage());
        }
      }
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}
