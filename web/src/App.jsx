import { Suspense, lazy } from 'react';
import { Navigate, Route, Routes } from 'react-router';
import { homeFor } from './access.js';
import { AuthProvider, useAuth } from './auth.jsx';
import { Layout, RequireAuth, RequireScreen } from './components/Layout.jsx';
import { Login } from './screens/Login.jsx';
import { PhoneNumbers } from './screens/PhoneNumbers.jsx';
import { PhoneNumberDetail } from './screens/PhoneNumberDetail.jsx';
import { SsoCallback } from './screens/SsoCallback.jsx';

// loaded when first opened: the first page ships only the sign-in and the numbers screens
const CallRecords = lazy(() => import('./screens/CallRecords.jsx').then((m) => ({ default: m.CallRecords })));
const CallRecordDetail = lazy(() => import('./screens/CallRecords.jsx').then((m) => ({ default: m.CallRecordDetail })));
const ApiKeys = lazy(() => import('./screens/ApiKeys.jsx').then((m) => ({ default: m.ApiKeys })));
const Users = lazy(() => import('./screens/Users.jsx').then((m) => ({ default: m.Users })));
const SecondFactor = lazy(() => import('./screens/SecondFactor.jsx').then((m) => ({ default: m.SecondFactor })));
const CarriersRoutes = lazy(() => import('./routing/Carriers.jsx').then((m) => ({ default: m.CarriersRoutes })));
const LcrRoutes = lazy(() => import('./routing/Lcr.jsx').then((m) => ({ default: m.LcrRoutes })));
const LiveView = lazy(() => import('./screens/LiveView.jsx').then((m) => ({ default: m.LiveView })));
const Queues = lazy(() => import('./screens/Queues.jsx').then((m) => ({ default: m.Queues })));
const ApplicationsRoutes = lazy(() => import('./apps/Applications.jsx').then((m) => ({ default: m.ApplicationsRoutes })));
const FlowsRoutes = lazy(() => import('./flows/Flows.jsx').then((m) => ({ default: m.FlowsRoutes })));
const Account = lazy(() => import('./screens/Account.jsx').then((m) => ({ default: m.Account })));
const CampaignsRoutes = lazy(() => import('./campaigns/Campaigns.jsx').then((m) => ({ default: m.CampaignsRoutes })));
const Callbacks = lazy(() => import('./screens/Callbacks.jsx').then((m) => ({ default: m.Callbacks })));
const QueueDetail = lazy(() => import('./screens/Queues.jsx').then((m) => ({ default: m.QueueDetail })));

export function App() {
  return (
    <AuthProvider>
      <Suspense fallback={<p role="status">Loading…</p>}>
        <Routes>
          <Route path="/login" element={<Login />} />
          <Route path="/login/sso" element={<SsoCallback />} />
          <Route element={<RequireAuth><Layout /></RequireAuth>}>
            <Route index element={<Home />} />
            <Route path="/numbers" element={<RequireScreen screen="phoneNumbers"><PhoneNumbers /></RequireScreen>} />
            <Route path="/numbers/:id" element={<RequireScreen screen="phoneNumbers"><PhoneNumberDetail /></RequireScreen>} />
            <Route path="/calls" element={<RequireScreen screen="callRecords"><CallRecords /></RequireScreen>} />
            <Route path="/calls/:id" element={<RequireScreen screen="callRecords"><CallRecordDetail /></RequireScreen>} />
            <Route path="/api-keys" element={<RequireScreen screen="apiKeys"><ApiKeys /></RequireScreen>} />
            <Route path="/users" element={<RequireScreen screen="users"><Users /></RequireScreen>} />
            <Route path="/account/second-factor" element={<SecondFactor />} />
            <Route path="/account" element={<RequireScreen screen="account"><Account /></RequireScreen>} />
            <Route path="/campaigns/*" element={<RequireScreen screen="campaigns"><CampaignsRoutes /></RequireScreen>} />
            <Route path="/carriers/*" element={<RequireScreen screen="carriers"><CarriersRoutes /></RequireScreen>} />
            <Route path="/lcr/*" element={<RequireScreen screen="lcr"><LcrRoutes /></RequireScreen>} />
            <Route path="/live" element={<RequireScreen screen="liveView"><LiveView /></RequireScreen>} />
            <Route path="/queues" element={<RequireScreen screen="queues"><Queues /></RequireScreen>} />
            <Route path="/queues/:id" element={<RequireScreen screen="queues"><QueueDetail /></RequireScreen>} />
            <Route path="/callbacks" element={<RequireScreen screen="callbacks"><Callbacks /></RequireScreen>} />
            <Route path="/applications/*" element={<RequireScreen screen="applications"><ApplicationsRoutes /></RequireScreen>} />
            <Route path="/flows/*" element={<RequireScreen screen="callFlows"><FlowsRoutes /></RequireScreen>} />
            <Route path="*" element={<NotFoundScreen />} />
          </Route>
        </Routes>
      </Suspense>
    </AuthProvider>
  );
}

function Home() {
  const { identity } = useAuth();
  return <Navigate to={homeFor(identity)} replace />;
}

function NotFoundScreen() {
  return <><h1>Not found</h1><p>There is no such screen.</p></>;
}
