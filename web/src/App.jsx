import { Suspense, lazy } from 'react';
import { Navigate, Route, Routes } from 'react-router';
import { AuthProvider } from './auth.jsx';
import { Layout, RequireAuth } from './components/Layout.jsx';
import { Login } from './screens/Login.jsx';
import { PhoneNumbers } from './screens/PhoneNumbers.jsx';
import { PhoneNumberDetail } from './screens/PhoneNumberDetail.jsx';

// loaded when first opened: the first page ships only the login and the numbers screens
const CallRecords = lazy(() => import('./screens/CallRecords.jsx').then((m) => ({ default: m.CallRecords })));
const CallRecordDetail = lazy(() => import('./screens/CallRecords.jsx').then((m) => ({ default: m.CallRecordDetail })));
const LiveView = lazy(() => import('./screens/LiveView.jsx').then((m) => ({ default: m.LiveView })));
const Queues = lazy(() => import('./screens/Queues.jsx').then((m) => ({ default: m.Queues })));
const QueueDetail = lazy(() => import('./screens/Queues.jsx').then((m) => ({ default: m.QueueDetail })));

export function App() {
  return (
    <AuthProvider>
      <Suspense fallback={<p role="status">Loading…</p>}>
        <Routes>
          <Route path="/login" element={<Login />} />
          <Route element={<RequireAuth><Layout /></RequireAuth>}>
            <Route index element={<Navigate to="/numbers" replace />} />
            <Route path="/numbers" element={<PhoneNumbers />} />
            <Route path="/numbers/:id" element={<PhoneNumberDetail />} />
            <Route path="/calls" element={<CallRecords />} />
            <Route path="/calls/:id" element={<CallRecordDetail />} />
            <Route path="/live" element={<LiveView />} />
            <Route path="/queues" element={<Queues />} />
            <Route path="/queues/:id" element={<QueueDetail />} />
            <Route path="*" element={<NotFoundScreen />} />
          </Route>
        </Routes>
      </Suspense>
    </AuthProvider>
  );
}

function NotFoundScreen() {
  return <><h1>Not found</h1><p>There is no such screen.</p></>;
}
